package io.etcdmemberagent.core.publish;

import java.util.List;

/** The whole status the agent writes to its EtcdMember in one patch. */
public record MemberStatusDocument(
    MemberFacts facts,
    MemberFigures figures,
    List<ConditionEntry> conditions,
    List<MemberTransition> transitions) {

  public MemberStatusDocument {
    conditions = List.copyOf(conditions);
    transitions = List.copyOf(transitions);
  }
}
