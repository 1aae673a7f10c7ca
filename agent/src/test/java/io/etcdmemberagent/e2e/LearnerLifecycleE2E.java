package io.etcdmemberagent.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.api.Member;
import io.etcdmemberagent.testing.EtcdBinaries;
import io.etcdmemberagent.testing.EtcdTestClient;
import io.etcdmemberagent.testing.Http;
import io.etcdmemberagent.testing.Pod;
import io.etcdmemberagent.testing.Poll;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The learner lifecycle with real processes only: {@code join} (init container), etcd from the env
 * file join wrote, and {@code run} (sidecar) promoting its own learner — against etcd 3.5 and 3.4.
 */
class LearnerLifecycleE2E {

  static Stream<String> versions() {
    return EtcdBinaries.withNewest().stream();
  }

  private final List<Pod> pods = new ArrayList<>();
  private final EtcdTestClient client = new EtcdTestClient();
  private Path baseDir;

  @AfterEach
  void cleanUp() throws IOException {
    pods.forEach(Pod::close);
    client.close();
    if (baseDir != null) {
      try (Stream<Path> paths = Files.walk(baseDir)) {
        paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  private List<Pod> createPods(String version, int count) {
    try {
      baseDir = Files.createTempDirectory("statefulset-" + version + "-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    for (int i = 0; i < count; i++) {
      pods.add(new Pod("etcd-" + i, EtcdBinaries.etcd(version), baseDir));
    }
    return pods;
  }

  private List<String> clientUrls() {
    return pods.stream().map(Pod::clientUrl).toList();
  }

  private List<Member> members() {
    for (Pod p : pods) {
      if (p.etcdRunning()) {
        try {
          return client.members(p.clientUrl());
        } catch (RuntimeException e) {
          // a learner or a member that is down: try the next one
        }
      }
    }
    throw new IllegalStateException("no member answered MemberList");
  }

  private Optional<Member> memberOf(Pod pod) {
    return members().stream().filter(m -> m.getPeerURLsList().contains(pod.peerUrl())).findFirst();
  }

  private boolean isVoter(Pod pod) {
    return memberOf(pod).map(m -> !m.getIsLearner() && !m.getName().isEmpty()).orElse(false);
  }

  private void bootstrapFirst(Pod first) {
    assertThat(
            first.join(clientUrls(), "--bootstrap-member=" + first.name(), "--bootstrap-wait=1s"))
        .as("join of the bootstrap member")
        .isZero();
    assertThat(first.env()).containsEntry("ETCD_INITIAL_CLUSTER_STATE", "new");
    first.startEtcd();
    first.startAgent(clientUrls());
    Poll.until(first.name() + " ready", Duration.ofSeconds(30), () -> ready(first));
  }

  private static boolean ready(Pod pod) {
    return Http.statusOrMinusOne(pod.httpPort(), "/readyz") == 200;
  }

  /** Joins, starts etcd and agent, and waits until the pod's own agent has promoted it. */
  private void growBy(Pod pod) {
    assertThat(pod.join(clientUrls()))
        .as("join of " + pod.name() + "\n" + pod.lastJoinOutput)
        .isZero();
    assertThat(pod.lastJoinOutput).contains("\"event\":\"joined-as-learner\"");
    assertThat(pod.env()).containsEntry("ETCD_INITIAL_CLUSTER_STATE", "existing");
    assertThat(memberOf(pod)).hasValueSatisfying(m -> assertThat(m.getIsLearner()).isTrue());
    pod.startAgent(clientUrls());
    pod.startEtcd();
    Poll.until(
        pod.name() + " promoted by its own agent and ready",
        Duration.ofSeconds(90),
        () -> {
          // never ready while a learner: checked on every sample
          boolean ready = ready(pod);
          boolean voter = isVoter(pod);
          assertThat(!ready || voter).as(pod.name() + " ready only as a voter").isTrue();
          return ready && voter;
        });
    assertThat(Http.get(pod.httpPort(), "/status").body()).contains("\"result\":\"promoted\"");
  }

  @ParameterizedTest(name = "etcd {0}")
  @MethodSource("versions")
  void growsOneToThreeToFiveEachMemberPromotedByItsOwnAgent(String version) {
    List<Pod> all = createPods(version, 5);
    bootstrapFirst(all.get(0));
    for (int i = 1; i < 5; i++) {
      growBy(all.get(i));
      assertThat(members()).hasSize(i + 1).allMatch(m -> !m.getIsLearner());
    }
    for (Pod p : all) {
      assertThat(ready(p)).as(p.name() + " ready").isTrue();
    }
  }

  @ParameterizedTest(name = "etcd {0}")
  @MethodSource("versions")
  void membersJoiningAtOnceAllBecomeVotersOneAfterAnother(String version) {
    List<Pod> all = createPods(version, 4);
    bootstrapFirst(all.get(0));
    List<Pod> joining = all.subList(1, 4);
    List<io.etcdmemberagent.testing.AgentProcess> joins = new ArrayList<>();
    for (Pod p : joining) {
      joins.add(p.startJoin(clientUrls()));
    }
    try {
      Poll.until(
          "all joiners to become voters",
          Duration.ofSeconds(180),
          () -> {
            for (int i = 0; i < joining.size(); i++) {
              Pod p = joining.get(i);
              if (!p.etcdRunning() && joins.get(i).process().isAlive() == false) {
                assertThat(joins.get(i).process().exitValue()).as("join of " + p.name()).isZero();
                p.startAgent(clientUrls());
                p.startEtcd();
              }
            }
            long learners = members().stream().filter(Member::getIsLearner).count();
            assertThat(learners)
                .as("at most one learner at a time (3.4/3.5)")
                .isLessThanOrEqualTo(1);
            return members().size() == 4
                && learners == 0
                && joining.stream().allMatch(LearnerLifecycleE2E::ready);
          });
      assertThat(joins.stream().map(j -> j.output()).filter(o -> o.contains("learner slot")))
          .as("some join waited for the learner slot")
          .isNotEmpty();
    } finally {
      joins.forEach(io.etcdmemberagent.testing.AgentProcess::close);
    }
  }

  @ParameterizedTest(name = "etcd {0}")
  @MethodSource("versions")
  void aRestartKeepsTheMemberAndALostVolumeIsReplacedOnlyWhenAllowed(String version) {
    List<Pod> all = createPods(version, 3);
    bootstrapFirst(all.get(0));
    growBy(all.get(1));
    growBy(all.get(2));
    Pod pod = all.get(2);
    long idBefore = memberOf(pod).orElseThrow().getID();

    pod.close();
    assertThat(pod.join(clientUrls())).as(pod.lastJoinOutput).isZero();
    assertThat(pod.lastJoinOutput)
        .contains("\"event\":\"join-restart\"")
        .doesNotContain("joined-as-learner");
    pod.startEtcd();
    pod.startAgent(clientUrls());
    Poll.until(pod.name() + " ready again", Duration.ofSeconds(60), () -> ready(pod));
    assertThat(members()).hasSize(3);
    assertThat(memberOf(pod).orElseThrow().getID()).isEqualTo(idBefore);

    // The pod's volume is lost: its member is started in the cluster, its data dir is empty.
    pod.close();
    deleteTree(pod.dataDir());
    assertThat(pod.join(clientUrls())).as("join without --replace-lost-member").isEqualTo(1);
    assertThat(pod.lastJoinOutput).contains("volume was lost", "--replace-lost-member");
    assertThat(memberOf(pod).orElseThrow().getID()).as("nothing changed").isEqualTo(idBefore);

    assertThat(pod.join(clientUrls(), "--replace-lost-member=true"))
        .as(pod.lastJoinOutput)
        .isZero();
    assertThat(pod.lastJoinOutput)
        .contains("\"event\":\"join-replaced-lost-member\"", "\"event\":\"joined-as-learner\"");
    assertThat(memberOf(pod).orElseThrow().getID()).isNotEqualTo(idBefore);
    pod.startAgent(clientUrls());
    pod.startEtcd();
    Poll.until(
        pod.name() + " a voter again", Duration.ofSeconds(90), () -> ready(pod) && isVoter(pod));
    assertThat(members()).hasSize(3).allMatch(m -> !m.getIsLearner());
  }

  private static void deleteTree(Path dir) {
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
