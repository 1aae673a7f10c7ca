package io.etcdmemberagent.ship;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.etcdmemberagent.bench.FootprintBench;
import io.etcdmemberagent.testing.AgentProcess;
import io.etcdmemberagent.testing.EtcdBinaries;
import io.etcdmemberagent.testing.Processes;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Dockerfile's training step, run here as written (its RUN words, with this machine's etcd, jar
 * and JDK 25 in place of the image's paths): the agent really meets a TLS etcd and makes a
 * Kubernetes call, the cache is written, and the JVM uses it ({@code -XX:AOTMode=on} fails when it
 * cannot). No Docker engine runs here, so this is as close to the image build as it gets.
 */
class ImageTrainingE2E {

  @TempDir Path dir;

  @Test
  void theDockerfilesTrainingStepMakesACacheTheJvmUses() throws Exception {
    Path java = FootprintBench.TEMURIN_25.resolve("bin/java");
    assumeThat(Files.isExecutable(java)).as("a JDK 25 (the image's) is installed").isTrue();
    List<String> words = runWords();
    Path cache = dir.resolve("agent.aot");
    Path log = dir.resolve("training-agent.log");
    Map<String, String> imagePaths =
        Map.of(
            words.get(3),
            Path.of("..", FootprintBench.TRAINING_SCRIPT).toString(),
            words.get(4),
            EtcdBinaries.etcd(EtcdBinaries.primary()).toString(),
            words.get(5),
            AgentProcess.jar().toString(),
            words.get(6),
            cache.toString(),
            words.get(7),
            java.toString());
    List<String> command = new ArrayList<>(List.of("sh"));
    for (String word : words.subList(3, words.size())) {
      command.add(imagePaths.getOrDefault(word, word));
    }
    String nativeDir = jnaNative().toString();
    command.replaceAll(w -> w.replace("/app/native", nativeDir));
    Processes.Result training = FootprintBench.runTraining(command, log);
    assertThat(training.exitCode()).as(training.output()).isZero();
    assertThat(cache).isNotEmptyFile();

    String agent = Files.readString(log);
    assertThat(agent)
        .as("polled a TLS etcd that answered")
        .contains("etcdEndpoint=https://")
        .contains("to=Voter");
    assertThat(agent)
        .as("made a Kubernetes call through client-java")
        .contains("kube-refused call=\"pods get\" detail=\"404");
    assertThat(agent).contains("exit-after").contains("stopped");

    Processes.Result run = FootprintBench.versionWithCache(java.toString(), cache);
    assertThat(run.exitCode()).as(run.output()).isZero();
    assertThat(run.output()).contains("Using AOT-linked classes");
  }

  /** JNA's native part taken out of the jar, as the Dockerfile's build stage does. */
  private Path jnaNative() throws Exception {
    Path nativeDir = Files.createDirectories(dir.resolve("native"));
    try (ZipFile jar = new ZipFile(AgentProcess.jar().toFile())) {
      ZipEntry so = jar.getEntry("com/sun/jna/linux-x86-64/libjnidispatch.so");
      try (InputStream in = jar.getInputStream(so)) {
        Files.copy(in, nativeDir.resolve("libjnidispatch.so"));
      }
    }
    return nativeDir;
  }

  /** The words of the final stage's RUN (the training step), in exec form. */
  private static List<String> runWords() throws Exception {
    DockerfileTest.Instruction run = DockerfileTest.only(DockerfileTest.finalStage(), "RUN");
    return DockerfileTest.jsonArray(run.arguments());
  }
}
