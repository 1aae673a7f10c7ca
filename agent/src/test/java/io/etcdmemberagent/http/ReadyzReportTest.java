package io.etcdmemberagent.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.core.Check;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ReadyzReportTest {

  static final List<Check> FAILING =
      List.of(
          Check.pass("voter", "Voter", "a voting member"),
          Check.fail("in-sync", "Lagging", "lag 48210 > 5000"));

  @Test
  void readyAndQuietSaysOk() {
    assertThat(ReadyzReport.all(List.of(Check.pass("voter", "Voter", "v")), Set.of(), false))
        .isEqualTo(new ReadyzReport.Answer(200, "ok\n"));
  }

  @Test
  void failureListsEveryCheckLikeKubeApiserver() {
    assertThat(ReadyzReport.all(FAILING, Set.of(), false))
        .isEqualTo(
            new ReadyzReport.Answer(
                503, "[+]voter ok\n[-]in-sync failed: lag 48210 > 5000\nreadyz check failed\n"));
  }

  @Test
  void anExcludedCheckDoesNotCount() {
    assertThat(ReadyzReport.all(FAILING, Set.of("in-sync"), true))
        .isEqualTo(
            new ReadyzReport.Answer(
                200, "[+]voter ok\n[+]in-sync excluded: ok\nreadyz check passed\n"));
  }

  @Test
  void oneCheckAnswersAlone() {
    assertThat(ReadyzReport.one(FAILING, "in-sync"))
        .isEqualTo(new ReadyzReport.Answer(503, "[-]in-sync failed: lag 48210 > 5000\n"));
    assertThat(ReadyzReport.one(FAILING, "voter"))
        .isEqualTo(new ReadyzReport.Answer(200, "[+]voter ok\n"));
    assertThat(ReadyzReport.one(FAILING, "nope").status()).isEqualTo(404);
  }
}
