# Image of the agent: `docker build -t etcd-member-agent .` at the repository root.
# Build stage: the Maven wrapper builds the shaded jar (tests run in CI, not here).
FROM eclipse-temurin:17-jdk AS build
WORKDIR /src
COPY .mvn/ .mvn/
COPY mvnw pom.xml ./
COPY agent/pom.xml agent/pom.xml
COPY agent/src agent/src
RUN ./mvnw -B -q -pl agent package -DskipTests -Dspotless.check.skip=true

# Run stage: a JRE only, a numeric non-root user, nothing written to the root filesystem.
FROM eclipse-temurin:17-jre
COPY --from=build /src/agent/target/etcd-member-agent.jar /opt/etcd-member-agent/etcd-member-agent.jar
USER 65532:65532
EXPOSE 9379
ENTRYPOINT ["java", "-XX:+UseSerialGC", "-XX:MaxRAMPercentage=75", "-Xss512k", "-jar", "/opt/etcd-member-agent/etcd-member-agent.jar"]
CMD ["run"]
