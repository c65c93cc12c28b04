// WindowFetcher: fills WindowCaches on a thread of its own, so that a frame
// never waits for SQLite (issue 31 item 7: a mid-zoom window of a 5M-event
// run took ~400 ms to fetch, in the frame that first showed it).
//
// Contract: start() opens a TraceReader of its own on the file (a reader is
// one per thread). request() hands it a window to fetch; only the latest
// request is kept: one not started yet is replaced by the next (a view being
// dragged asks for many windows; only the last matters). A fetch, once
// started, runs to its end (WindowCache::fetch: decode, sort, classify,
// match transfers, all on the fetch thread). `onDone` runs on the fetch
// thread after each fetch: it must be thread-safe (e.g. post to the GUI
// thread), which then take()s the result. pause() holds requests unstarted
// until resume() (nothing is lost; tests use it to hold a fetch while frames
// are asked for). start(), stop(), request(), take(), pause(), resume() and
// the destructor are for one controlling thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "common/status.h"
#include "gui/window_cache.h"

namespace bubblescope::gui {

class WindowFetcher {
 public:
  struct Window {
    int64_t t0Ns = 0, t1Ns = 0;
    bool covers(double a, double b) const { return a >= t0Ns && b <= t1Ns; }
  };
  struct Fetched {
    Window window;
    Status status;                       // the fetch's error, if any
    std::unique_ptr<WindowCache> cache;  // filled when status is ok
  };

  WindowFetcher() = default;
  ~WindowFetcher() { stop(); }
  WindowFetcher(const WindowFetcher&) = delete;
  WindowFetcher& operator=(const WindowFetcher&) = delete;

  // Stops any fetching, then starts the thread for run `runId` of `path`.
  void start(const std::string& path, int64_t runId, std::function<void()> onDone);
  // Stops the thread (after the fetch under way) and drops what is queued
  // or done; pause() is lifted.
  void stop();
  bool started() const { return thread_.joinable(); }

  // Asks for [t0Ns, t1Ns); replaces a request not started yet.
  void request(Window w);
  // The window asked for and not yet taken (queued, being fetched, or done):
  // nullopt when none.
  std::optional<Window> inFlight() const;
  // The latest finished fetch, once (nullopt when none is done).
  std::optional<Fetched> take();
  // Waits until no request is queued or being fetched (an explicit wait:
  // screenshots, the render bench, tests; never a frame). Returns at once
  // while paused with a request queued (it would never start).
  void waitIdle();

  void pause();
  void resume();
  // Fetches started since start() (counted work, for tests).
  int64_t fetchesStarted() const;

 private:
  void run(std::string path, int64_t runId, std::function<void()> onDone);

  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;  // to the fetch thread: a request, resume or stop
  std::condition_variable idle_;  // to waitIdle(): a fetch ended
  bool stop_ = false;
  bool paused_ = false;
  bool busy_ = false;  // a fetch is under way
  std::optional<Window> queued_;
  std::optional<Window> running_;
  std::optional<Fetched> done_;
  int64_t started_ = 0;
};

}  // namespace bubblescope::gui
