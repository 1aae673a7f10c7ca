package io.etcdmemberagent.app.publish;

import io.etcdmemberagent.core.KubeAnswer;
import io.etcdmemberagent.core.publish.MemberResourceApi;
import io.etcdmemberagent.core.publish.MemberResourceApi.MemberResourceView;
import io.etcdmemberagent.core.publish.PodApi.PodApiException;
import java.util.Optional;

/**
 * Finds this member's EtcdMember, creating it when absent, owned by the Pod's controller (its
 * StatefulSet) so it survives the Pod's re-creation and goes with the StatefulSet. Shared by {@code
 * run} and {@code join}, which may race to create it: the loser reads the winner's object.
 */
public final class MemberObject {

  private MemberObject() {}

  /** The object, or the call that failed and the server's answer. */
  public sealed interface Found {}

  public record Present(MemberResourceView view, boolean created) implements Found {}

  public record Failed(String call, KubeAnswer answer) implements Found {}

  public static Found findOrCreate(MemberResourceApi api) {
    try {
      Optional<MemberResourceView> view = api.read();
      if (view.isPresent()) {
        return new Present(view.get(), false);
      }
    } catch (PodApiException e) {
      return new Failed("etcdmembers get", e.answer());
    }
    Optional<MemberResourceApi.ResourceOwner> owner;
    try {
      owner = api.podOwner();
    } catch (PodApiException e) {
      return new Failed("pods get", e.answer());
    }
    KubeAnswer created = api.create(owner);
    if (!(created instanceof KubeAnswer.Done) && !(created instanceof KubeAnswer.Conflict)) {
      return new Failed("etcdmembers create", created);
    }
    try {
      return api.read()
          .<Found>map(v -> new Present(v, created instanceof KubeAnswer.Done))
          .orElse(
              new Failed(
                  "etcdmembers get",
                  new KubeAnswer.Retry(
                      java.time.Duration.ZERO, "the object is gone right after its creation")));
    } catch (PodApiException e) {
      return new Failed("etcdmembers get", e.answer());
    }
  }
}
