package io.etcdmemberagent.app;

import io.etcdmemberagent.config.ConfigException;
import io.etcdmemberagent.config.RunConfig;
import io.etcdmemberagent.testing.Http;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The agent's run loop in the test JVM, on a free HTTP port; for integration tests. */
final class InProcessAgent implements AutoCloseable {
  private final RunCommand command;

  private InProcessAgent(RunCommand command) {
    this.command = command;
  }

  static InProcessAgent start(String... flags) {
    List<String> args = new ArrayList<>(List.of("--http-host=127.0.0.1", "--http-port=0"));
    args.addAll(List.of(flags));
    try {
      RunCommand command = new RunCommand(RunConfig.parse(args, Map.of()), Map.of());
      command.start();
      return new InProcessAgent(command);
    } catch (ConfigException | StartupException e) {
      throw new IllegalStateException(e);
    }
  }

  int port() {
    return command.httpPort();
  }

  Http.Answer get(String path) {
    return Http.get(port(), path);
  }

  @Override
  public void close() {
    command.stop();
  }
}
