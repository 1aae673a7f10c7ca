package io.etcdmemberagent.bench;

import java.util.ArrayList;
import java.util.List;

/** Markdown tables of figures: what was measured, the value, the goal, how to reproduce. */
final class Report {

  record Row(String figure, String variant, String value, String goal) {}

  private final List<String> sections = new ArrayList<>();
  private final List<Row> rows = new ArrayList<>();
  private String title;
  private List<Row> current;

  void section(String title, String note) {
    flush();
    this.title = "### " + title + "\n\n" + (note.isEmpty() ? "" : note + "\n\n");
    this.current = new ArrayList<>();
  }

  void row(String figure, String variant, String value, String goal) {
    Row r = new Row(figure, variant, value, goal);
    current.add(r);
    rows.add(r);
  }

  List<Row> rows() {
    return List.copyOf(rows);
  }

  private void flush() {
    if (current == null) {
      return;
    }
    StringBuilder t = new StringBuilder(title);
    t.append("| figure | variant | measured (median, min – max) | goal |\n|---|---|---|---|\n");
    for (Row r : current) {
      t.append("| ")
          .append(r.figure())
          .append(" | ")
          .append(r.variant())
          .append(" | ")
          .append(r.value())
          .append(" | ")
          .append(r.goal())
          .append(" |\n");
    }
    sections.add(t.toString());
    current = null;
  }

  String markdown(String header) {
    flush();
    return header + "\n" + String.join("\n", sections);
  }
}
