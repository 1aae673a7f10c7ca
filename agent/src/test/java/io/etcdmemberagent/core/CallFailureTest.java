package io.etcdmemberagent.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.core.promotion.PromoteResult;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** etcd's refusals, by code and whole text, as 3.4 to 3.7 send them (measured, see README). */
class CallFailureTest {

  @ParameterizedTest(name = "{0} {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        // a learner's refusal: UNAVAILABLE on 3.4/3.5, FAILED_PRECONDITION from 3.6
        "UNAVAILABLE|etcdserver: rpc not supported for learner|LEARNER_REJECTED",
        "FAILED_PRECONDITION|etcdserver: rpc not supported for learner|LEARNER_REJECTED",
        "INVALID_ARGUMENT|etcdserver: authentication failed, invalid user ID or password"
            + "|AUTHENTICATION_FAILED",
        "INVALID_ARGUMENT|Authenticate as agent via http://a:2379: etcdserver: authentication"
            + " failed, invalid user ID or password|AUTHENTICATION_FAILED",
        "INVALID_ARGUMENT|etcdserver: user name is empty|AUTHENTICATION_FAILED",
        "UNAUTHENTICATED|etcdserver: invalid auth token|AUTHENTICATION_FAILED",
        "PERMISSION_DENIED|etcdserver: permission denied|PERMISSION_DENIED",
        "UNAVAILABLE|io exception|UNAVAILABLE",
        "DEADLINE_EXCEEDED||UNAVAILABLE",
        "FAILED_PRECONDITION|etcdserver: too many learner members in cluster|UNAVAILABLE",
      })
  void classifiesByCodeAndWholeText(String code, String message, CallFailure expected) {
    assertThat(CallFailure.classify(code, message)).isEqualTo(expected);
  }

  @ParameterizedTest(name = "{1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "FAILED_PRECONDITION|etcdserver: can only promote a learner member which is in sync with"
            + " leader|NOT_IN_SYNC",
        // a prefix of the text above: the member is a voter already
        "FAILED_PRECONDITION|etcdserver: can only promote a learner member|ALREADY_VOTER",
        "NOT_FOUND|etcdserver: member not found|NOT_FOUND",
        "PERMISSION_DENIED|etcdserver: permission denied|DENIED",
        "INVALID_ARGUMENT|etcdserver: authentication failed, invalid user ID or password|DENIED",
        "UNAVAILABLE|etcdserver: request timed out|FAILED",
      })
  void promoteErrorsAreMatchedAsWholeTexts(String code, String message, PromoteResult expected) {
    assertThat(PromoteResult.ofError(new ChangeAnswer.Error(code, message))).isEqualTo(expected);
  }
}
