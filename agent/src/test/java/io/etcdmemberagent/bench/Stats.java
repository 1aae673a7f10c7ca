package io.etcdmemberagent.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/** Median and spread of repeated measurements. */
record Stats(double median, double min, double max, int runs) {

  static Stats of(List<Double> values) {
    if (values.isEmpty()) {
      return new Stats(Double.NaN, Double.NaN, Double.NaN, 0);
    }
    List<Double> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    int n = sorted.size();
    double median =
        n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    return new Stats(median, sorted.get(0), sorted.get(n - 1), n);
  }

  String format(String unit) {
    if (runs == 0) {
      return "n/a";
    }
    if (runs == 1) {
      return number(median) + " " + unit + " (1 run)";
    }
    return number(median)
        + " "
        + unit
        + " ("
        + number(min)
        + " – "
        + number(max)
        + ", "
        + runs
        + " runs)";
  }

  static String number(double v) {
    if (Math.abs(v) >= 100 || v == Math.rint(v)) {
      return String.format(Locale.ROOT, "%.0f", v);
    }
    return String.format(Locale.ROOT, Math.abs(v) >= 10 ? "%.1f" : "%.2f", v);
  }
}
