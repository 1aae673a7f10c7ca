package io.etcdmemberagent.core;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Chooses where membership calls go. A learner answers only Status and serializable reads, so the
 * local endpoint is used only while the local member is known to be a started voter.
 */
public final class VoterEndpoints {

  private VoterEndpoints() {}

  /**
   * @param localEndpoint the local member's client URL
   * @param local this poll's local observation
   * @param configured {@code --cluster-endpoints}; when given, they are used as they are
   * @param lastKnown the member list from an earlier poll, if any
   */
  public static List<String> choose(
      String localEndpoint, LocalObservation local, List<String> configured, Membership lastKnown) {
    Set<String> out = new LinkedHashSet<>();
    boolean localVoter = local instanceof LocalObservation.Answered a && !a.status().learner();
    if (localVoter) {
      out.add(localEndpoint);
    }
    if (!configured.isEmpty()) {
      out.addAll(configured);
    } else if (lastKnown instanceof Membership.Known known) {
      for (MemberInfo m : known.members()) {
        if (!m.learner()) {
          out.addAll(m.clientUrls());
        }
      }
    }
    if (!localVoter) {
      out.remove(localEndpoint);
    }
    return new ArrayList<>(out);
  }
}
