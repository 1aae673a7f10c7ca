package io.etcdmemberagent.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import io.etcdmemberagent.core.Check;
import io.etcdmemberagent.core.CheckNames;
import io.etcdmemberagent.http.AgentView;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class WiringViewTest {

  final WiringView view = new WiringView();

  @Test
  void whileWiringAliveButNotReady() {
    assertThat(view.readinessChecks())
        .extracting(Check::name)
        .containsExactlyElementsOf(CheckNames.ALL);
    assertThat(view.readinessChecks())
        .allSatisfy(
            check -> {
              assertThat(check.passed()).isFalse();
              assertThat(check.reason()).isEqualTo("Starting");
            });
    assertThat(view.livenessProblem()).isEmpty();
    assertThat(view.latest()).isEmpty();
    assertThat(view.statusExtras()).isEmpty();
  }

  @Test
  void onceWiredTheAgentStateAnswers() {
    List<Check> checks = List.of(Check.pass("voter", "Voter", "a voting member"));
    AgentView state = mock(AgentView.class);
    when(state.readinessChecks()).thenReturn(checks);
    when(state.livenessProblem()).thenReturn(Optional.of("no poll finished for 9000ms"));
    when(state.statusExtras()).thenReturn(Map.of("agent", Map.of("version", "test")));

    view.wired(state);

    assertThat(view.readinessChecks()).isSameAs(checks);
    assertThat(view.livenessProblem()).contains("no poll finished for 9000ms");
    assertThat(view.statusExtras()).containsKey("agent");
  }
}
