package io.etcdmemberagent.app.publish;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * How a writer thread waits between rounds: until a timeout, or until new work is signalled. A
 * signal between two rounds is kept, so no wake-up is lost.
 */
final class Wakeup {

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition wake = lock.newCondition();
  private boolean dirty;

  void signal() {
    lock.lock();
    try {
      dirty = true;
      wake.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** Waits up to {@code d} unless signalled; false when interrupted (the writer should stop). */
  boolean await(Duration d) {
    lock.lock();
    try {
      if (d.isZero()) {
        return true;
      }
      if (!dirty) {
        wake.await(d.toNanos(), TimeUnit.NANOSECONDS);
      }
      dirty = false;
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } finally {
      lock.unlock();
    }
  }
}
