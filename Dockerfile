# Image of the agent. Build at the repository root with BuildKit (needs a Docker engine; none runs
# on the development machines, so CI checks this file with DockerfileTest instead of building it,
# and runs its training script in the footprint benchmark):
#   docker build -t etcd-member-agent:0.2.0 .
#   docker run --rm etcd-member-agent:0.2.0 version
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

# What only the training step below mounts (nothing of them stays in the image): etcd's own
# image for a real etcd, distroless's debug variant of the run stage's base for a busybox shell.
FROM gcr.io/etcd-development/etcd:v3.6.16 AS training-etcd
FROM gcr.io/distroless/java25-debian13:debug-nonroot AS training-shell

# Run stage: a maintained minimal JRE (distroless, Java 25 runs the Java 17 jar) without a shell
# or package manager, a numeric non-root user, and nothing written to the root filesystem at run
# time: JNA's native part is unpacked here, not into /tmp; no hsperfdata file.
FROM gcr.io/distroless/java25-debian13:nonroot
COPY --from=build /out/etcd-member-agent.jar /app/etcd-member-agent.jar
COPY --from=build /out/native/libjnidispatch.so /app/native/libjnidispatch.so
# The ahead-of-time cache (JEP 483/514/515: classes loaded and linked, method profiles), made
# here by the same JVM with the same flags that run it, from a training run of the agent's real
# paths (deploy/image/aot-training.sh: a TLS etcd, the disk check, scrapes, a Kubernetes call).
# It replaces the CDS archive: start-up 0.4 s instead of 0.7 s (BENCHMARKS.md). A cache that does
# not fit the JVM is reported and ignored (-XX:AOTMode=auto), never fatal.
USER 0
RUN --mount=type=bind,from=training-shell,source=/busybox,target=/busybox \
    --mount=type=bind,from=training-etcd,source=/usr/local/bin/etcd,target=/training/etcd \
    --mount=type=bind,source=deploy/image/aot-training.sh,target=/training/aot-training.sh \
    ["/busybox/env", "PATH=/busybox:/usr/bin:/bin", "sh", "/training/aot-training.sh", "/training/etcd", "/app/etcd-member-agent.jar", "/app/etcd-member-agent.aot", "java", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:CompileThresholdScaling=0.05", "-XX:MaxRAMPercentage=60", "-XX:MinHeapFreeRatio=5", "-XX:MaxHeapFreeRatio=20", "-Xss512k", "-XX:-UsePerfData", "-Dio.netty.allocator.type=unpooled", "-Djna.boot.library.path=/app/native", "-Djna.nounpack=true"]
USER 65532:65532
EXPOSE 9379
ENTRYPOINT ["java", "-XX:AOTCache=/app/etcd-member-agent.aot", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:CompileThresholdScaling=0.05", "-XX:MaxRAMPercentage=60", "-XX:MinHeapFreeRatio=5", "-XX:MaxHeapFreeRatio=20", "-Xss512k", "-XX:-UsePerfData", "-Dio.netty.allocator.type=unpooled", "-Djna.boot.library.path=/app/native", "-Djna.nounpack=true", "-jar", "/app/etcd-member-agent.jar"]
CMD ["run"]
