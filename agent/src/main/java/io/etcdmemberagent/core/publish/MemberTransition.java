package io.etcdmemberagent.core.publish;

import java.time.Instant;

/**
 * One entry of an EtcdMember's history: the role after it, why (DEP-04's reasons where they fit,
 * such as {@code PromotedAsVotingMember}), a sentence, and when the agent saw it.
 */
public record MemberTransition(MemberRole role, String reason, String message, Instant at) {}
