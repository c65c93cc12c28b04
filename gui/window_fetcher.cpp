#include "gui/window_fetcher.h"

#include <utility>

#include "storage/trace_reader.h"

namespace bubblescope::gui {

void WindowFetcher::start(const std::string& path, int64_t runId, std::function<void()> onDone) {
  stop();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = false;
    started_ = 0;
  }
  thread_ = std::thread(&WindowFetcher::run, this, path, runId, std::move(onDone));
}

void WindowFetcher::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  paused_ = busy_ = false;
  queued_.reset();
  running_.reset();
  done_.reset();
  idle_.notify_all();
}

void WindowFetcher::request(Window w) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queued_ = w;
  }
  wake_.notify_all();
}

std::optional<WindowFetcher::Window> WindowFetcher::inFlight() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (queued_) return queued_;
  if (running_) return running_;
  if (done_) return done_->window;
  return std::nullopt;
}

std::optional<WindowFetcher::Fetched> WindowFetcher::take() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::optional<Fetched> out = std::move(done_);
  done_.reset();
  return out;
}

void WindowFetcher::waitIdle() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [&] { return !thread_.joinable() || (!busy_ && (!queued_ || paused_)); });
}

void WindowFetcher::pause() {
  std::lock_guard<std::mutex> lock(mutex_);
  paused_ = true;
}

void WindowFetcher::resume() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    paused_ = false;
  }
  wake_.notify_all();
}

int64_t WindowFetcher::fetchesStarted() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return started_;
}

void WindowFetcher::run(std::string path, int64_t runId, std::function<void()> onDone) {
  auto reader = storage::TraceReader::open(path);
  for (;;) {
    Window w;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || (queued_ && !paused_); });
      if (stop_) return;
      w = *queued_;
      queued_.reset();
      running_ = w;
      busy_ = true;
      ++started_;
    }
    Fetched f{w, Status::ok(), nullptr};
    if (!reader.isOk()) {
      f.status = reader.status();
    } else {
      f.cache = std::make_unique<WindowCache>();
      f.status = f.cache->fetch(**reader, runId, w.t0Ns, w.t1Ns);
      if (!f.status.isOk()) f.cache.reset();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      running_.reset();
      busy_ = false;
      done_ = std::move(f);  // an older result not taken yet is superseded
    }
    idle_.notify_all();
    onDone();
  }
}

}  // namespace bubblescope::gui
