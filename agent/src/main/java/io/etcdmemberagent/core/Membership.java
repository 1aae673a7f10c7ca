package io.etcdmemberagent.core;

import java.util.List;
import java.util.Optional;

/** The member list as read through a voter in one poll, or why it could not be read. */
public sealed interface Membership {

  /** {@code clusterId}: from the answer's header, 0 when not known. */
  record Known(List<MemberInfo> members, String readFrom, long clusterId) implements Membership {
    public Known {
      members = List.copyOf(members);
    }

    public Known(List<MemberInfo> members, String readFrom) {
      this(members, readFrom, 0);
    }

    public Optional<MemberInfo> byId(long id) {
      return members.stream().filter(m -> m.id() == id).findFirst();
    }

    /** This member's entry: by its id when known (not 0), else by its advertised peer URLs. */
    public Optional<MemberInfo> own(long memberId, List<String> peerUrls) {
      Optional<MemberInfo> byId = memberId != 0 ? byId(memberId) : Optional.empty();
      return byId.isPresent() ? byId : byPeerUrls(peerUrls);
    }

    public Optional<MemberInfo> byPeerUrls(List<String> peerUrls) {
      if (peerUrls.isEmpty()) {
        return Optional.empty();
      }
      return members.stream().filter(m -> m.sharesPeerUrlWith(peerUrls)).findFirst();
    }
  }

  /** Not read; {@code failure} tells whether credentials or permissions were the cause. */
  record Unknown(String reason, CallFailure failure) implements Membership {
    public Unknown(String reason) {
      this(reason, CallFailure.UNAVAILABLE);
    }
  }
}
