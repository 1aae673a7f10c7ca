package io.etcdmemberagent.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every relative link and anchor in the repository's Markdown resolves, the chart's README
 * included, and so does the {@code runbook_url} of every alert the chart's rules render. Anchors
 * follow GitHub's rule: the heading's text in lower case, without anything but letters, digits,
 * spaces, hyphens and underscores, spaces turned into hyphens, a repeated one numbered {@code -1},
 * {@code -2}, ... Links in fenced code blocks and in inline code are not links; external ones
 * ({@code http:}, {@code https:}, {@code mailto:}, any scheme) are not checked.
 */
class MarkdownLinksTest {

  /** The repository: the tests run in {@code agent/}. */
  static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

  static final Set<String> SKIPPED = Set.of("target", "node_modules");

  static final Pattern FENCE = Pattern.compile("^ {0,3}(`{3,}|~{3,})(.*)$");
  static final Pattern HEADING =
      Pattern.compile("^ {0,3}#{1,6}(?:[ \\t]+(.*?))?(?:[ \\t]+#+)?[ \\t]*$");
  static final Pattern HTML_ANCHOR = Pattern.compile("<a\\s+(?:name|id)=\"([^\"]+)\"");
  static final Pattern CODE_SPAN = Pattern.compile("(`+)(.+?)\\1");
  static final Pattern INLINE_LINK =
      Pattern.compile("\\]\\(\\s*(<[^>]*>|[^\\s()]+)(?:\\s+\"[^\"]*\")?\\s*\\)");
  static final Pattern REFERENCE = Pattern.compile("^ {0,3}\\[[^\\]]+\\]:\\s*(\\S+)");
  static final Pattern LINK_TEXT = Pattern.compile("!?\\[([^\\]]*)\\]\\([^)]*\\)");
  static final Pattern SCHEME = Pattern.compile("^[A-Za-z][A-Za-z0-9+.-]*:");

  static final Path VALUES = Path.of("charts", "etcd-member-agent", "values.yaml");
  static final Path RULES =
      Path.of("charts", "etcd-member-agent", "templates", "prometheusrule.yaml");
  static final Pattern RUNBOOK_BASE = Pattern.compile("(?m)^\\s*runbookUrl:\\s*(\\S+)");
  static final Pattern ALERT = Pattern.compile("(?m)^\\s*-\\s*alert:\\s*(\\w+)");
  static final Pattern RUNBOOK =
      Pattern.compile("runbook_url:\\s*\"\\{\\{\\s*\\$runbook\\s*\\}\\}#([^\"]*)\"");
  static final String IN_THIS_REPOSITORY = "/blob/main/";

  @Test
  void everyRelativeLinkAndAnchorInTheRepositoryResolves() throws IOException {
    List<Path> files = markdownFiles(ROOT);
    assertThat(files).as("Markdown files under %s", ROOT).isNotEmpty();
    assertThat(files).contains(ROOT.resolve("charts/etcd-member-agent/README.md"));
    List<String> broken = new ArrayList<>();
    for (Path file : files) {
      broken.addAll(brokenLinks(ROOT, file));
    }
    assertThat(String.join("\n", broken)).as("broken links (file:line: link)").isEmpty();
  }

  @Test
  void everyAlertsRunbookUrlLandsOnASectionOfTheRunbooksPage() throws IOException {
    Matcher base = RUNBOOK_BASE.matcher(Files.readString(ROOT.resolve(VALUES)));
    assertThat(base.find()).as("%s sets runbookUrl", VALUES).isTrue();
    String url = base.group(1);
    int at = url.indexOf(IN_THIS_REPOSITORY);
    assertThat(at).as("runbookUrl %s points into this repository", url).isPositive();
    Path page = ROOT.resolve(url.substring(at + IN_THIS_REPOSITORY.length()));
    assertThat(page).as("the page runbookUrl names").isRegularFile();
    Set<String> anchors = anchors(page);
    String rules = Files.readString(ROOT.resolve(RULES));
    List<String> alerts = matches(ALERT, rules);
    List<String> runbooks = matches(RUNBOOK, rules);
    assertThat(alerts).as("alerts in %s", RULES).isNotEmpty();
    assertThat(runbooks).as("a runbook_url for each alert").hasSameSizeAs(alerts);
    List<String> broken = new ArrayList<>();
    for (int i = 0; i < alerts.size(); i++) {
      String alert = alerts.get(i);
      String anchor = runbooks.get(i);
      if (!anchor.equals(alert.toLowerCase(Locale.ROOT))) {
        broken.add(alert + ": #" + anchor + " is not the alert's name in lower case");
      }
      if (!anchors.contains(anchor)) {
        broken.add(alert + ": " + url + "#" + anchor + " is not a section of " + page);
      }
    }
    assertThat(String.join("\n", broken)).as("runbook URLs").isEmpty();
  }

  @Test
  void anchorsFollowGitHubsRule() {
    assertThat(slug("`join`: the init container")).isEqualTo("join-the-init-container");
    assertThat(slug("Promotion: our rule, etcd's")).isEqualTo("promotion-our-rule-etcds");
    assertThat(slug("A \u2192 B | C_d")).isEqualTo("a--b--c_d");
    assertThat(slug("See [the page](page.md)")).isEqualTo("see-the-page");
    List<String> lines = List.of("# A", "```", "# B", "```", "## A ##", "Text", "## A");
    assertThat(anchors(lines)).containsExactlyInAnyOrder("a", "a-1", "a-2");
  }

  @Test
  void reportsWhatIsBrokenAndLeavesCodeAndExternalLinksAlone(@TempDir Path root)
      throws IOException {
    Files.writeString(root.resolve("other.md"), "# Other page\n");
    List<String> page = new ArrayList<>();
    page.add("# Page");
    page.add("[fine](other.md#other-page) [here](#page) [site](https://example.com/x.md)");
    page.add("[gone](missing.md) [wrong](other.md#nothing) `[code](ignored.md)`");
    page.add("```");
    page.add("[fenced](ignored.md)");
    page.add("```");
    page.add("[up](../outside.md)");
    Path file = root.resolve("page.md");
    Files.write(file, page);
    assertThat(brokenLinks(root, file))
        .containsExactly(
            "page.md:3: missing.md (no such file)",
            "page.md:3: other.md#nothing (no anchor #nothing)",
            "page.md:7: ../outside.md (outside the repository)");
  }

  /**
   * The Markdown files under {@code root}, without build output, dependencies and hidden
   * directories.
   */
  static List<Path> markdownFiles(Path root) throws IOException {
    List<Path> found = new ArrayList<>();
    Files.walkFileTree(root, new MarkdownFiles(root, found));
    found.sort(null);
    return found;
  }

  /** Every link of {@code file} that does not resolve, as {@code path:line: link (why)}. */
  static List<String> brokenLinks(Path root, Path file) throws IOException {
    List<String> broken = new ArrayList<>();
    String name = root.relativize(file).toString().replace('\\', '/');
    for (Map.Entry<Integer, String> line : prose(Files.readAllLines(file)).entrySet()) {
      for (String link : links(line.getValue())) {
        String where = name + ":" + line.getKey() + ": " + link;
        problem(root, file, link).ifPresent(why -> broken.add(where + " (" + why + ")"));
      }
    }
    return broken;
  }

  /** The targets of the inline links and link reference definitions on one line of prose. */
  static List<String> links(String line) {
    String text = CODE_SPAN.matcher(line).replaceAll(m -> "x".repeat(m.group().length()));
    List<String> links = new ArrayList<>();
    Matcher inline = INLINE_LINK.matcher(text);
    while (inline.find()) {
      links.add(inline.group(1));
    }
    Matcher reference = REFERENCE.matcher(text);
    if (reference.find()) {
      links.add(reference.group(1));
    }
    return links;
  }

  /** Why {@code link} in {@code file} does not resolve, or empty when it does or is external. */
  static Optional<String> problem(Path root, Path file, String link) throws IOException {
    String target = link.startsWith("<") ? link.substring(1, link.length() - 1) : link;
    if (SCHEME.matcher(target).find()) {
      return Optional.empty();
    }
    int hash = target.indexOf('#');
    String path = (hash < 0 ? target : target.substring(0, hash)).replace("%20", " ");
    String anchor = hash < 0 ? "" : target.substring(hash + 1);
    Path resolved;
    if (path.isEmpty()) {
      resolved = file;
    } else if (path.startsWith("/")) {
      resolved = root.resolve(path.substring(1)).normalize();
    } else {
      resolved = file.getParent().resolve(path).normalize();
    }
    if (!resolved.startsWith(root)) {
      return Optional.of("outside the repository");
    }
    if (!Files.exists(resolved)) {
      return Optional.of("no such file");
    }
    boolean markdown = resolved.getFileName().toString().endsWith(".md");
    if (!anchor.isEmpty() && markdown && !anchors(resolved).contains(anchor)) {
      return Optional.of("no anchor #" + anchor);
    }
    return Optional.empty();
  }

  private static final Map<Path, Set<String>> ANCHORS = new HashMap<>();

  /** The anchors GitHub gives the headings of a Markdown file (and its HTML anchors). */
  static Set<String> anchors(Path file) throws IOException {
    Set<String> known = ANCHORS.get(file);
    if (known == null) {
      known = anchors(Files.readAllLines(file));
      ANCHORS.put(file, known);
    }
    return known;
  }

  static Set<String> anchors(List<String> lines) {
    Set<String> anchors = new HashSet<>();
    Map<String, Integer> seen = new HashMap<>();
    for (String line : prose(lines).values()) {
      Matcher heading = HEADING.matcher(line);
      if (heading.matches()) {
        String slug = slug(heading.group(1) == null ? "" : heading.group(1));
        int count = seen.merge(slug, 1, Integer::sum);
        anchors.add(count == 1 ? slug : slug + "-" + (count - 1));
      }
      Matcher html = HTML_ANCHOR.matcher(line);
      while (html.find()) {
        anchors.add(html.group(1));
      }
    }
    return anchors;
  }

  /** GitHub's anchor for a heading's text. */
  static String slug(String heading) {
    String text = LINK_TEXT.matcher(heading.strip()).replaceAll("$1").toLowerCase(Locale.ROOT);
    StringBuilder slug = new StringBuilder();
    for (char c : text.toCharArray()) {
      if (Character.isLetterOrDigit(c) || c == '-' || c == '_') {
        slug.append(c);
      } else if (c == ' ') {
        slug.append('-');
      }
    }
    return slug.toString();
  }

  /** The lines outside fenced code blocks, by line number from 1. */
  static Map<Integer, String> prose(List<String> lines) {
    Map<Integer, String> prose = new LinkedHashMap<>();
    String fence = null;
    for (int i = 0; i < lines.size(); i++) {
      Matcher marker = FENCE.matcher(lines.get(i));
      if (fence == null && marker.matches()) {
        fence = marker.group(1);
      } else if (fence == null) {
        prose.put(i + 1, lines.get(i));
      } else if (marker.matches() && closes(marker, fence)) {
        fence = null;
      }
    }
    return prose;
  }

  /** A closing fence: the opening one's character, at least as long, and nothing after it. */
  private static boolean closes(Matcher marker, String fence) {
    String run = marker.group(1);
    boolean sameKind = run.charAt(0) == fence.charAt(0) && run.length() >= fence.length();
    return sameKind && marker.group(2).isBlank();
  }

  private static List<String> matches(Pattern pattern, String text) {
    List<String> found = new ArrayList<>();
    Matcher m = pattern.matcher(text);
    while (m.find()) {
      found.add(m.group(1));
    }
    return found;
  }

  /**
   * Collects {@code *.md} files, skipping {@code target/}, {@code node_modules/} and hidden
   * directories.
   */
  private static final class MarkdownFiles extends SimpleFileVisitor<Path> {
    private final Path root;
    private final List<Path> found;

    MarkdownFiles(Path root, List<Path> found) {
      this.root = root;
      this.found = found;
    }

    @Override
    public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
      String name = dir.equals(root) ? "" : dir.getFileName().toString();
      boolean skipped = SKIPPED.contains(name) || name.startsWith(".");
      return skipped ? FileVisitResult.SKIP_SUBTREE : FileVisitResult.CONTINUE;
    }

    @Override
    public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
      if (file.getFileName().toString().endsWith(".md")) {
        found.add(file);
      }
      return FileVisitResult.CONTINUE;
    }
  }
}
