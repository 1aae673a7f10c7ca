package io.etcdmemberagent.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.core.LeaderObservation;
import io.etcdmemberagent.core.LocalObservation;
import io.etcdmemberagent.core.Membership;
import io.etcdmemberagent.core.poll.PollOutcome;
import io.etcdmemberagent.core.promotion.PromoteResult;
import io.etcdmemberagent.core.promotion.PromotionAttempt;
import io.etcdmemberagent.core.readiness.MemberEvaluator;
import io.etcdmemberagent.core.readiness.MemberSnapshot;
import io.etcdmemberagent.core.readiness.ReadinessPolicy;
import io.etcdmemberagent.core.readiness.Verdict;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Keeps the metrics table of docs/endpoints-and-metrics.md true: exactly the families the agent
 * registers, each with its type. What the agent registers is read from a scrape, after every meter
 * has been used once, not from a list kept here.
 */
class MetricsReferenceTest {

  static final Path PAGE = Path.of("..", "docs", "endpoints-and-metrics.md");

  static final Pattern TYPE = Pattern.compile("# TYPE (\\S+) (\\S+)");

  /** A metric name in a table cell: {@code `name`} or {@code `name{label,label}`}. */
  static final Pattern NAME = Pattern.compile("`([a-z0-9_]+)(\\{[a-z_,]*\\})?`");

  @Test
  void theTableListsExactlyTheFamiliesTheAgentRegistersWithTheirTypes() throws IOException {
    Map<String, String> registered = registered();
    Map<String, String> documented = documented();
    assertThat(registered).as("our families in a scrape").containsKey("ready");
    assertThat(documented.keySet())
        .as("the metrics table of %s against the families the agent registers", PAGE)
        .containsExactlyInAnyOrderElementsOf(registered.keySet());
    assertThat(documented).as("the type column of %s", PAGE).isEqualTo(registered);
  }

  /** Our families in a scrape, by name without the prefix, with their Prometheus type. */
  private static Map<String, String> registered() {
    String text;
    try (MicrometerMetrics metrics = new MicrometerMetrics()) {
      touchEveryMeter(metrics);
      text = new String(metrics.scrape(null), StandardCharsets.UTF_8);
    }
    Map<String, String> families = new TreeMap<>();
    for (String line : text.lines().toList()) {
      Matcher type = TYPE.matcher(line);
      if (type.matches() && type.group(1).startsWith(MicrometerMetrics.PREFIX)) {
        String name = type.group(1).substring(MicrometerMetrics.PREFIX.length());
        boolean counter = type.group(2).equals("counter");
        families.put(counter && !name.endsWith("_total") ? name + "_total" : name, type.group(2));
      }
    }
    // Micrometer adds a gauge <name>_max beside each timer's histogram: part of the timer's row
    Set<String> maxima = new TreeSet<>();
    for (String name : families.keySet()) {
      String histogram = name.substring(0, Math.max(0, name.length() - "_max".length()));
      if (name.endsWith("_max") && "histogram".equals(families.get(histogram))) {
        maxima.add(name);
      }
    }
    families.keySet().removeAll(maxima);
    return families;
  }

  /**
   * Registers the meters that appear only once they are used: poll errors, the version info,
   * removals, patches, events.
   */
  private static void touchEveryMeter(MicrometerMetrics metrics) {
    PollOutcome answered = MicrometerMetricsTest.learnerOutcome();
    metrics.recordPoll(answered);
    metrics.recordPoll(silent(answered));
    PromoteResult promoted = PromoteResult.PROMOTED;
    Duration took = Duration.ofMillis(7);
    metrics.recordPromotion(new PromotionAttempt(Instant.EPOCH, 1, 3, promoted, "ok", took));
    metrics.recordRemoval("scale-down", "removed");
    metrics.recordPatch("ok", took);
    metrics.recordEvent("ok");
    metrics.recordKubeState(false, Instant.EPOCH.plusSeconds(60));
    metrics.recordTlsReload("success");
    metrics.recordCertificateExpiry("client", Instant.EPOCH.plusSeconds(3600));
  }

  /** A poll in which every etcd call failed, so that the poll-error counters get their series. */
  private static PollOutcome silent(PollOutcome ok) {
    LocalObservation local = new LocalObservation.TimedOut("x");
    Membership members = new Membership.Unknown("y");
    LeaderObservation leader = new LeaderObservation.Unavailable("z");
    Instant at = ok.snapshot().takenAt();
    MemberSnapshot down = new MemberSnapshot(at, local, members, leader, List.of(), 0);
    Verdict verdict = new MemberEvaluator(new ReadinessPolicy(5000)).evaluate(down);
    Duration took = Duration.ofSeconds(1);
    return new PollOutcome(2, down, verdict, ok.progress(), ok.promotion(), List.of(), took);
  }

  /** The metrics table of the page: each name in a row's first cell, with the row's type. */
  private static Map<String, String> documented() throws IOException {
    List<String> lines = Files.readAllLines(PAGE);
    int start = lines.indexOf("## Metrics");
    assertThat(start).as("%s has a section ## Metrics", PAGE).isNotNegative();
    Map<String, String> documented = new TreeMap<>();
    List<String> duplicates = new ArrayList<>();
    for (String line : lines.subList(start + 1, lines.size())) {
      if (line.startsWith("#")) {
        break;
      }
      if (!line.startsWith("| `")) {
        continue;
      }
      String[] cells = line.split("\\|");
      Matcher name = NAME.matcher(cells[1]);
      while (name.find()) {
        if (documented.put(name.group(1), cells[2].strip()) != null) {
          duplicates.add(name.group(1));
        }
      }
    }
    assertThat(duplicates).as("metrics listed twice in %s", PAGE).isEmpty();
    return documented;
  }
}
