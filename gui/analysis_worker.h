// AnalysisWorker: runs analysis::analyzeRun off the GUI thread, with the
// advice (AnalysisOptions::advice) the Charts show.
//
// Contract: analyze() starts a thread that opens its own TraceReader on the
// file (readers are not thread-safe) and analyses the given runs in order;
// a newer analyze() or cancel() supersedes the one in flight, whose results
// are dropped. progress, finished and failed are emitted on the thread that
// owns the worker (the GUI thread), only for the latest request. The
// destructor cancels and joins every thread it started.
#pragma once

#include <QObject>
#include <QString>
#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "common/result.h"
#include "storage/analysis/run_report.h"

namespace bubblescope::gui {

class AnalysisWorker : public QObject {
  Q_OBJECT

 public:
  explicit AnalysisWorker(QObject* parent = nullptr);
  ~AnalysisWorker() override;

  // Analyses `runIds` of the trace file at `path`, in order.
  void analyze(const QString& path, std::vector<int64_t> runIds);
  void cancel();
  bool busy() const { return busy_; }

  // Synchronous (tests, screenshots): the same analysis on this thread.
  static Result<std::vector<analysis::RunReport>> analyzeNow(const QString& path,
                                                             const std::vector<int64_t>& runIds);

 signals:
  // Ranks analysed so far over all requested runs, and their total.
  void progress(int done, int total);
  void finished(const std::vector<bubblescope::analysis::RunReport>& reports);
  void failed(const QString& message);

 private:
  void joinFinished();

  struct Job {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> cancelled;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::vector<Job> jobs_;
  uint64_t generation_ = 0;
  bool busy_ = false;
};

}  // namespace bubblescope::gui
