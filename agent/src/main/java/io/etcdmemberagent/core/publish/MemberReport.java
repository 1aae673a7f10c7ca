package io.etcdmemberagent.core.publish;

import java.util.List;

/** The status of this member's EtcdMember as one poll sees it, before its history is added. */
public record MemberReport(
    MemberFacts facts, MemberFigures figures, List<PodCondition> conditions) {

  public MemberReport {
    conditions = List.copyOf(conditions);
  }
}
