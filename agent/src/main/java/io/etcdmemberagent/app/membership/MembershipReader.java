package io.etcdmemberagent.app.membership;

import io.etcdmemberagent.core.EtcdGateway;
import io.etcdmemberagent.core.LocalObservation;
import io.etcdmemberagent.core.Membership;
import io.etcdmemberagent.core.VoterEndpoints;
import java.util.ArrayList;
import java.util.List;

/** Reads the member list through voters only, trying a bounded number of them. */
public final class MembershipReader {

  /** Bounds one read: the member list is tried on at most this many voters. */
  public static final int MAX_ATTEMPTS = 3;

  private final EtcdGateway etcd;
  private final String localEndpoint;
  private final List<String> clusterEndpoints;

  public MembershipReader(EtcdGateway etcd, String localEndpoint, List<String> clusterEndpoints) {
    this.etcd = etcd;
    this.localEndpoint = localEndpoint;
    this.clusterEndpoints = List.copyOf(clusterEndpoints);
  }

  /** The voters' client URLs to use, given this poll's local answer and the last list. */
  public List<String> voters(LocalObservation local, Membership lastKnown) {
    return VoterEndpoints.choose(localEndpoint, local, clusterEndpoints, lastKnown);
  }

  public Membership read(LocalObservation local, Membership lastKnown) {
    List<String> voters = voters(local, lastKnown);
    if (voters.isEmpty()) {
      String why =
          local instanceof LocalObservation.Answered
              ? "the local member is a learner and no voter is known (set --cluster-endpoints)"
              : "the local member did not answer and no other voter is known";
      return new Membership.Unknown(why);
    }
    List<String> failures = new ArrayList<>();
    for (String endpoint : voters.subList(0, Math.min(voters.size(), MAX_ATTEMPTS))) {
      Membership m = etcd.memberList(endpoint);
      if (m instanceof Membership.Known) {
        return m;
      }
      failures.add(((Membership.Unknown) m).reason());
    }
    return new Membership.Unknown(String.join("; ", failures));
  }
}
