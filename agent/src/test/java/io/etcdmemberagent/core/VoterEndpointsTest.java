package io.etcdmemberagent.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class VoterEndpointsTest {

  static final String LOCAL = "http://127.0.0.1:2379";
  static final Membership KNOWN =
      new Membership.Known(
          List.of(
              new MemberInfo(1, "self", List.of("p1"), List.of(LOCAL), false),
              new MemberInfo(2, "b", List.of("p2"), List.of("http://b:2379"), false),
              new MemberInfo(3, "learner", List.of("p3"), List.of("http://c:2379"), true)),
          LOCAL);

  static LocalObservation answered(boolean learner) {
    return new LocalObservation.Answered(
        new LocalStatus(1, 2, 1, 1, 1, 1, 1, learner, "3.5.30", List.of()));
  }

  @Test
  void aVoterAsksItselfFirstThenTheOtherVoters() {
    assertThat(VoterEndpoints.choose(LOCAL, answered(false), List.of(), KNOWN))
        .containsExactly(LOCAL, "http://b:2379");
  }

  @Test
  void aLearnerNeverAsksItselfNorOtherLearners() {
    assertThat(VoterEndpoints.choose(LOCAL, answered(true), List.of(), KNOWN))
        .containsExactly("http://b:2379");
    assertThat(
            VoterEndpoints.choose(LOCAL, answered(true), List.of(LOCAL, "http://svc:2379"), KNOWN))
        .containsExactly("http://svc:2379");
  }

  @Test
  void aSilentLocalMemberIsNotAsked() {
    assertThat(VoterEndpoints.choose(LOCAL, new LocalObservation.Refused("x"), List.of(), KNOWN))
        .containsExactly("http://b:2379");
  }

  @Test
  void configuredEndpointsWinOverTheMemberList() {
    assertThat(VoterEndpoints.choose(LOCAL, answered(false), List.of("http://svc:2379"), KNOWN))
        .containsExactly(LOCAL, "http://svc:2379");
  }

  @Test
  void aLearnerWithNothingConfiguredHasNowhereToAsk() {
    assertThat(
            VoterEndpoints.choose(
                LOCAL, answered(true), List.of(), new Membership.Unknown("not read")))
        .isEmpty();
  }
}
