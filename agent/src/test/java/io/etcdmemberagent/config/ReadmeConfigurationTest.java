package io.etcdmemberagent.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** Keeps README.md's configuration table true: every flag, its env twin and its default. */
class ReadmeConfigurationTest {

  @Test
  void everyRunFlagIsDocumentedWithItsTwinAndDefault() throws Exception {
    String readme = Files.readString(Path.of("..", "README.md"));
    for (Flag flag : RunConfig.FLAGS) {
      String row =
          readme
              .lines()
              .filter(l -> l.startsWith("| `" + flag.display() + "` |"))
              .findFirst()
              .orElseThrow(() -> new AssertionError("README lacks a row for " + flag.display()));
      assertThat(row).contains("`" + flag.envName() + "`");
      if (!flag.defaultValue().isEmpty()) {
        assertThat(row).as(flag.display()).contains("`" + flag.defaultValue() + "`");
      }
    }
  }
}
