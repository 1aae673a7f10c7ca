# Image of the agent. Build at the repository root (needs a Docker engine; none runs on the
# development machines, so CI checks this file with DockerfileTest instead of building it):
#   docker build -t etcd-member-agent:0.1.0 .
#   docker run --rm etcd-member-agent:0.1.0 version
# The subcommand is the argument: `run` (the sidecar, default) or `join` (the init container).

# Build stage: the Maven wrapper builds the shaded jar (the tests run in CI, not here).
FROM eclipse-temurin:17.0.17_10-jdk-noble AS build
ARG TARGETARCH=amd64
WORKDIR /src
COPY .mvn/ .mvn/
COPY mvnw pom.xml ./
COPY agent/pom.xml agent/pom.xml
COPY agent/src agent/src
RUN ./mvnw -B -q -pl agent package -Dmaven.test.skip=true -Dspotless.check.skip=true \
 && mkdir -p /out/native \
 && cp agent/target/etcd-member-agent.jar /out/ \
 && case "$TARGETARCH" in arm64) jna=linux-aarch64 ;; *) jna=linux-x86-64 ;; esac \
 && cd /out/native && jar xf /out/etcd-member-agent.jar "com/sun/jna/$jna/libjnidispatch.so" \
 && mv "com/sun/jna/$jna/libjnidispatch.so" . && rm -rf com

# Run stage: a maintained minimal JRE without a shell or package manager (distroless, Java 21
# runs the Java 17 jar), a numeric non-root user, and nothing written to the root filesystem at
# run time: JNA's native part is unpacked here, not into /tmp; no hsperfdata file.
FROM gcr.io/distroless/java21-debian12:nonroot
COPY --from=build /out/etcd-member-agent.jar /app/etcd-member-agent.jar
COPY --from=build /out/native/libjnidispatch.so /app/native/libjnidispatch.so
# A class-data-sharing archive made once here with the same JVM and flags that run it (exec form:
# the image has no shell): a 5 s training run of the agent polling an etcd that is not there
# loads gRPC, Netty, the HTTP server and the metrics registry, then stops by itself. It cuts
# start-up by about a third; an archive of `run --help` did not help (BENCHMARKS.md).
USER 0
RUN ["java", "-XX:ArchiveClassesAtExit=/app/etcd-member-agent.jsa", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k", "-XX:-UsePerfData", "-Dio.netty.allocator.type=unpooled", "-Djna.boot.library.path=/app/native", "-Djna.nounpack=true", "-jar", "/app/etcd-member-agent.jar", "run", "--etcd-endpoint=http://127.0.0.1:1", "--kube=off", "--http-host=127.0.0.1", "--http-port=0", "--exit-after=5s"]
USER 65532:65532
EXPOSE 9379
ENTRYPOINT ["java", "-XX:SharedArchiveFile=/app/etcd-member-agent.jsa", "-Xshare:auto", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:MaxRAMPercentage=60", "-XX:MinHeapFreeRatio=5", "-XX:MaxHeapFreeRatio=20", "-Xss512k", "-XX:-UsePerfData", "-Dio.netty.allocator.type=unpooled", "-Djna.boot.library.path=/app/native", "-Djna.nounpack=true", "-jar", "/app/etcd-member-agent.jar"]
CMD ["run"]
