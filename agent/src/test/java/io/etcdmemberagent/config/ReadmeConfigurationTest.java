package io.etcdmemberagent.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** Keeps README.md's configuration table true: every flag, its env twin and its default. */
class ReadmeConfigurationTest {

  @Test
  void everyRunFlagIsDocumentedWithItsTwinAndDefault() throws Exception {
    assertDocumented("### Configuration of `run`", RunConfig.FLAGS);
  }

  @Test
  void everyJoinFlagIsDocumentedWithItsTwinAndDefault() throws Exception {
    assertDocumented("### Configuration of `join`", JoinConfig.FLAGS);
  }

  private static void assertDocumented(String heading, java.util.List<Flag> flags)
      throws Exception {
    String readme = Files.readString(Path.of("..", "README.md"));
    int start = readme.indexOf(heading);
    assertThat(start).as("README has a section " + heading).isNotNegative();
    int end = readme.indexOf("\n#", start + heading.length());
    String section = readme.substring(start, end < 0 ? readme.length() : end);
    for (Flag flag : flags) {
      String row =
          section
              .lines()
              .filter(l -> l.startsWith("| `" + flag.display() + "` |"))
              .findFirst()
              .orElseThrow(() -> new AssertionError("README lacks a row for " + flag.display()));
      assertThat(row).contains("`" + flag.envName() + "`");
      if (flag.defaultValue() != null && !flag.defaultValue().isEmpty()) {
        assertThat(row).as(flag.display()).contains("`" + flag.defaultValue() + "`");
      }
    }
  }
}
