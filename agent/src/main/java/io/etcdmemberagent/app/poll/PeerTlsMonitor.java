package io.etcdmemberagent.app.poll;

import io.etcdmemberagent.core.MemberInfo;
import io.etcdmemberagent.core.Membership;
import io.etcdmemberagent.core.tls.PeerTlsFacts;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * Supplies each poll's peer-TLS facts for this member's peer URLs as the live member list shows
 * them: inspected every {@code interval} and at once when those URLs change, the last findings
 * reused in between (a TLS handshake per poll would be waste).
 */
public final class PeerTlsMonitor {

  private final Function<List<String>, PeerTlsFacts> inspector;
  private final Duration interval;
  private List<String> lastUrls = List.of();
  private long lastInspectedNanos;
  private PeerTlsFacts last = new PeerTlsFacts.Unknown("the member list has not been read yet");

  public PeerTlsMonitor(Function<List<String>, PeerTlsFacts> inspector, Duration interval) {
    this.inspector = inspector;
    this.interval = interval;
  }

  public PeerTlsFacts facts(Membership lastKnown, long memberId, List<String> configuredPeerUrls) {
    if (!(lastKnown instanceof Membership.Known known)) {
      return last;
    }
    Optional<MemberInfo> own = known.own(memberId, configuredPeerUrls);
    if (own.isEmpty()) {
      return new PeerTlsFacts.Unknown("this member is not in the member list");
    }
    List<String> urls = own.get().peerUrls();
    boolean due =
        !(last instanceof PeerTlsFacts.Inspected)
            || !urls.equals(lastUrls)
            || System.nanoTime() - lastInspectedNanos >= interval.toNanos();
    if (due) {
      last = inspector.apply(urls);
      lastUrls = urls;
      lastInspectedNanos = System.nanoTime();
    }
    return last;
  }
}
