package io.etcdmemberagent.config;

import java.time.Duration;

/**
 * The scale-down rule's knobs: whether surplus members are removed at all, how often the leader's
 * agent looks for surplus members whose Pods are gone, and how long a terminating surplus member's
 * agent keeps trying to remove its own member.
 */
public record ScaleDownSettings(boolean enabled, Duration checkInterval, Duration budget) {}
