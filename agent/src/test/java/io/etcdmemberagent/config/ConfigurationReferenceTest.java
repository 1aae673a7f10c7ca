package io.etcdmemberagent.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Keeps docs/configuration.md true to the flag definitions: every flag of {@code run} and {@code
 * join}, in the code's order, with its environment twin, its default, and the meaning column word
 * for word as {@code --help} prints it (code formatting aside).
 */
class ConfigurationReferenceTest {

  static final Path PAGE = Path.of("..", "docs", "configuration.md");

  @Test
  void theRunTableIsTheRunFlagsAsHelpPrintsThem() throws IOException {
    assertTable("## Flags of `run`", "run", RunConfig.FLAGS);
  }

  @Test
  void theJoinTableIsTheJoinFlagsAsHelpPrintsThem() throws IOException {
    assertTable("## Flags of `join`", "join", JoinConfig.FLAGS);
  }

  private static void assertTable(String heading, String subcommand, List<Flag> flags)
      throws IOException {
    List<List<String>> rows = flagRows(section(heading));
    List<String> documented = rows.stream().map(r -> r.get(0)).toList();
    List<String> declared = flags.stream().map(f -> "`" + f.display() + "`").toList();
    assertThat(documented).as("the flags of %s in %s", subcommand, PAGE).isEqualTo(declared);
    String usage = Subcommands.usage(subcommand, flags);
    for (int i = 0; i < flags.size(); i++) {
      Flag flag = flags.get(i);
      List<String> row = rows.get(i);
      String name = flag.display();
      assertThat(row).as("the cells of %s's row", name).hasSizeGreaterThanOrEqualTo(4);
      assertThat(row.get(1)).as("%s's env twin", name).isEqualTo("`" + flag.envName() + "`");
      String fallback = flag.defaultValue();
      if (fallback != null && !fallback.isEmpty()) {
        assertThat(row.get(2)).as("%s's default", name).contains("`" + fallback + "`");
      }
      String meaning = row.get(3).replace("`", "");
      assertThat(meaning).as("%s's meaning, as --help prints it", name).isEqualTo(flag.help());
      String flagged = "  " + name + " ";
      String printed = " " + meaning;
      boolean helped = usage.lines().anyMatch(l -> l.startsWith(flagged) && l.endsWith(printed));
      assertThat(helped).as("%s --help prints %s with: %s", subcommand, name, meaning).isTrue();
    }
  }

  /** The lines of the page's section under {@code heading}, up to the next heading. */
  private static List<String> section(String heading) throws IOException {
    List<String> lines = Files.readAllLines(PAGE);
    int start = lines.indexOf(heading);
    assertThat(start).as("%s has a section %s", PAGE, heading).isNotNegative();
    List<String> section = new ArrayList<>();
    for (String line : lines.subList(start + 1, lines.size())) {
      if (line.startsWith("#")) {
        break;
      }
      section.add(line);
    }
    return section;
  }

  /** The cells of each table row that documents a flag (its first cell is {@code `--name`}). */
  private static List<List<String>> flagRows(List<String> section) {
    List<List<String>> rows = new ArrayList<>();
    for (String line : section) {
      if (line.startsWith("| `--")) {
        rows.add(cells(line.strip()));
      }
    }
    return rows;
  }

  private static List<String> cells(String row) {
    List<String> cells = new ArrayList<>();
    for (String cell : row.substring(1, row.length() - 1).split("(?<!\\\\)\\|", -1)) {
      cells.add(cell.strip().replace("\\|", "|"));
    }
    return cells;
  }
}
