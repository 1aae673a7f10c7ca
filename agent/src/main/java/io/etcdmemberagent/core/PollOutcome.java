package io.etcdmemberagent.core;

import java.time.Duration;

/** One finished poll: what was seen, what was decided, how long it took. */
public record PollOutcome(long sequence, MemberSnapshot snapshot, Verdict verdict, Duration took) {}
