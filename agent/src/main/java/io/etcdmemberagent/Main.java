package io.etcdmemberagent;

import io.etcdmemberagent.app.RunCommand;
import io.etcdmemberagent.app.StartupException;
import io.etcdmemberagent.app.join.JoinCommand;
import io.etcdmemberagent.config.ConfigException;
import io.etcdmemberagent.config.JoinConfig;
import io.etcdmemberagent.config.RunConfig;
import io.etcdmemberagent.config.ServiceLinks;
import io.etcdmemberagent.config.Subcommands;
import io.etcdmemberagent.support.EventLog;
import io.etcdmemberagent.support.Version;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/** Entry point: {@code run | join | version}. The only place that exits the process. */
public final class Main {

  static final int OK = 0;
  static final int FAILED = 1;
  static final int BAD_CONFIG = 2;

  private Main() {}

  public static void main(String[] args) {
    System.exit(execute(Arrays.asList(args), System.getenv()));
  }

  static int execute(List<String> args, Map<String, String> env) {
    if (args.isEmpty()) {
      System.err.println(
          "usage: etcd-member-agent run|join|version [flags]  (run --help, join --help list flags)");
      return BAD_CONFIG;
    }
    String command = args.get(0);
    List<String> rest = args.subList(1, args.size());
    ServiceLinks links = ServiceLinks.in(env);
    try {
      switch (command) {
        case "version" -> {
          System.out.println("etcd-member-agent " + Version.current());
          return OK;
        }
        case "run" -> {
          if (rest.contains("--help")) {
            System.out.print(Subcommands.usage("run", RunConfig.FLAGS));
            return OK;
          }
          RunConfig config = RunConfig.parse(rest, links.remaining());
          EventLog.configure(config.log().format(), config.log().level(), System.err);
          noteServiceLinks(links);
          new RunCommand(config, env).runUntilStopped();
          return OK;
        }
        case "join" -> {
          if (rest.contains("--help")) {
            System.out.print(Subcommands.usage("join", JoinConfig.FLAGS));
            return OK;
          }
          JoinConfig config = JoinConfig.parse(rest, links.remaining());
          EventLog.configure(config.log().format(), config.log().level(), System.err);
          noteServiceLinks(links);
          return JoinCommand.execute(config);
        }
        default -> {
          System.err.println(
              "etcd-member-agent: unknown command \"" + command + "\" (run, join, version)");
          return BAD_CONFIG;
        }
      }
    } catch (ConfigException e) {
      System.err.println("etcd-member-agent: " + e.getMessage());
      return BAD_CONFIG;
    } catch (StartupException e) {
      System.err.println("etcd-member-agent: " + e.getMessage());
      return BAD_CONFIG;
    } catch (java.io.IOException e) {
      System.err.println("etcd-member-agent: " + e);
      return FAILED;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return FAILED;
    }
  }

  private static void noteServiceLinks(ServiceLinks links) {
    if (!links.names().isEmpty()) {
      EventLog.warn("service-links-set-aside", "detail", links.describe());
    }
  }
}
