package io.etcdmemberagent.ship;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.bench.FootprintBench;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * What can be checked of the image without a Docker engine: pinned bases, a numeric non-root user,
 * an entrypoint that runs the jar the build makes, no secrets copied, no shell needed at run time.
 */
class DockerfileTest {

  static final Path ROOT = Path.of("..");

  record Instruction(String keyword, String arguments) {}

  static List<Instruction> instructions() throws IOException {
    List<Instruction> list = new ArrayList<>();
    String joined = Files.readString(ROOT.resolve("Dockerfile")).replaceAll("\\\\\\n", " ");
    for (String line : joined.split("\n")) {
      String t = line.strip();
      if (t.isEmpty() || t.startsWith("#")) {
        continue;
      }
      int space = t.indexOf(' ');
      list.add(
          new Instruction(t.substring(0, space).toUpperCase(), t.substring(space + 1).strip()));
    }
    return list;
  }

  /** The instructions of the last stage: what the image is at run time. */
  static List<Instruction> finalStage() throws IOException {
    List<Instruction> all = instructions();
    int from = 0;
    for (int i = 0; i < all.size(); i++) {
      if (all.get(i).keyword().equals("FROM")) {
        from = i;
      }
    }
    return all.subList(from, all.size());
  }

  @Test
  void everyBaseImageIsPinnedByATag() throws IOException {
    List<String> bases =
        instructions().stream()
            .filter(i -> i.keyword().equals("FROM"))
            .map(i -> i.arguments().split("\\s+")[0])
            .toList();
    assertThat(bases).hasSizeGreaterThanOrEqualTo(2);
    for (String base : bases) {
      assertThat(base).as(base).matches(".+:[A-Za-z0-9._-]+").doesNotEndWith(":latest");
    }
    assertThat(bases.get(bases.size() - 1)).as("a minimal JRE base").contains("distroless/java");
  }

  @Test
  void theImageRunsAsANumericNonRootUser() throws IOException {
    List<Instruction> users =
        finalStage().stream().filter(i -> i.keyword().equals("USER")).toList();
    assertThat(users).isNotEmpty();
    String last = users.get(users.size() - 1).arguments();
    assertThat(last).matches("\\d+(:\\d+)?");
    assertThat(Integer.parseInt(last.split(":")[0])).isPositive();
  }

  @Test
  void theEntrypointRunsTheShadedJarAndTheSubcommandIsTheArgument() throws IOException {
    List<Instruction> stage = finalStage();
    String entrypoint =
        stage.stream()
            .filter(i -> i.keyword().equals("ENTRYPOINT"))
            .findFirst()
            .orElseThrow()
            .arguments();
    List<String> words = jsonArray(entrypoint);
    assertThat(words.get(0)).isEqualTo("java");
    String jar = words.get(words.indexOf("-jar") + 1);
    assertThat(Path.of(jar).getFileName().toString())
        .as("the shade plugin's finalName")
        .isEqualTo("etcd-member-agent.jar");
    assertThat(stage)
        .anySatisfy(
            i -> {
              assertThat(i.keyword()).isEqualTo("COPY");
              assertThat(i.arguments()).startsWith("--from=").endsWith(jar);
            });
    assertThat(
            jsonArray(
                stage.stream()
                    .filter(i -> i.keyword().equals("CMD"))
                    .findFirst()
                    .orElseThrow()
                    .arguments()))
        .containsExactly("run");
    assertThat(words)
        .as("the flags the footprint benchmark measures")
        .containsAll(FootprintBench.TUNED);
    assertThat(Files.readString(ROOT.resolve("agent/pom.xml")))
        .contains("<finalName>etcd-member-agent</finalName>");
  }

  @Test
  void theAheadOfTimeCacheIsMadeByTheBenchmarkedTrainingWithTheFlagsThatRunIt() throws IOException {
    List<Instruction> stage = finalStage();
    List<String> entrypoint = jsonArray(only(stage, "ENTRYPOINT").arguments());
    String cacheFlag =
        entrypoint.stream().filter(w -> w.startsWith("-XX:AOTCache=")).findFirst().orElseThrow();
    String cache = cacheFlag.substring(cacheFlag.indexOf('=') + 1);
    assertThat(entrypoint).noneMatch(w -> w.startsWith("-XX:SharedArchiveFile"));
    Instruction training = only(stage, "RUN");
    List<String> words = jsonArray(training.arguments());
    assertThat(training.arguments())
        .as("the script the footprint benchmark runs, mounted for this step only")
        .contains("source=" + FootprintBench.TRAINING_SCRIPT + ",target=" + words.get(3));
    assertThat(words.subList(0, 3))
        .containsExactly("/busybox/env", "PATH=/busybox:/usr/bin:/bin", "sh");
    String jar = entrypoint.get(entrypoint.indexOf("-jar") + 1);
    assertThat(words.get(5)).as("the jar the image runs").isEqualTo(jar);
    assertThat(words.get(6)).as("the cache the image uses").isEqualTo(cache);
    assertThat(words.get(7)).isEqualTo(entrypoint.get(0));
    List<String> runFlags = new ArrayList<>(entrypoint.subList(1, entrypoint.indexOf("-jar")));
    runFlags.remove(cacheFlag);
    assertThat(words.subList(8, words.size()))
        .as("trained with exactly the flags that run it")
        .isEqualTo(runFlags);
  }

  @Test
  void nothingAtRunTimeNeedsAShellAndTheTrainingLeavesNothingBehind() throws IOException {
    for (Instruction i : finalStage()) {
      if (List.of("RUN", "ENTRYPOINT", "CMD").contains(i.keyword())) {
        String command = i.arguments().replaceAll("^(--mount=\\S+\\s+)*", "");
        assertThat(command).as(i.keyword() + " in exec form").startsWith("[");
        Matcher mount = Pattern.compile("--mount=(\\S+)").matcher(i.arguments());
        while (mount.find()) {
          assertThat(mount.group(1))
              .as("only bind mounts, gone after the step")
              .startsWith("type=bind,");
        }
      }
    }
  }

  static Instruction only(List<Instruction> stage, String keyword) {
    List<Instruction> found = stage.stream().filter(i -> i.keyword().equals(keyword)).toList();
    assertThat(found).as(keyword).hasSize(1);
    return found.get(0);
  }

  @Test
  void noSecretIsCopiedAndTheContextIsAllowListed() throws IOException {
    Pattern secret =
        Pattern.compile("(?i)(\\.key|\\.pem|\\.crt|\\.p12|kubeconfig|\\.env\\b|id_rsa|token)");
    for (Instruction i : instructions()) {
      if (i.keyword().equals("COPY") || i.keyword().equals("ADD")) {
        Matcher m = secret.matcher(i.arguments());
        assertThat(m.find()).as(i.arguments()).isFalse();
      }
    }
    List<String> ignore = Files.readAllLines(ROOT.resolve(".dockerignore"));
    assertThat(ignore.stream().filter(l -> !l.isBlank() && !l.startsWith("#")).findFirst())
        .as("deny everything first, then allow what the build needs")
        .hasValue("**");
  }

  /** The quoted words of an instruction (exec form); BuildKit's --mount options are unquoted. */
  static List<String> jsonArray(String text) {
    List<String> words = new ArrayList<>();
    Matcher m = Pattern.compile("\"([^\"]*)\"").matcher(text);
    while (m.find()) {
      words.add(m.group(1));
    }
    return words;
  }
}
