package io.etcdmemberagent.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class JsonTest {
  @Test
  void writesNestedValuesAndEscapes() {
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("s", "a\"b\\c\nd\u0001");
    doc.put("n", 42L);
    doc.put("b", true);
    doc.put("nan", Double.NaN);
    doc.put("none", null);
    doc.put("empty", Optional.empty());
    doc.put("lag", OptionalLong.of(7));
    doc.put("list", Arrays.asList(1, "x", null));
    doc.put("map", Map.of("k", List.of()));
    assertThat(Json.write(doc))
        .isEqualTo(
            "{\"s\":\"a\\\"b\\\\c\\nd\\u0001\",\"n\":42,\"b\":true,\"nan\":null,\"none\":null,"
                + "\"empty\":null,\"lag\":7,\"list\":[1,\"x\",null],\"map\":{\"k\":[]}}");
  }
}
