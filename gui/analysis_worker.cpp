#include "gui/analysis_worker.h"

#include <QMetaObject>
#include <QPointer>

#include "storage/analysis/run_analyzer.h"
#include "storage/trace_reader.h"

namespace bubblescope::gui {

namespace {

// Analyses runIds; onRanks(done, total) after each rank returns false to stop.
Result<std::vector<analysis::RunReport>> analyzeRuns(const QString& path,
                                                     const std::vector<int64_t>& runIds,
                                                     const std::function<bool(int, int)>& onRanks) {
  auto reader = storage::TraceReader::open(path.toStdString());
  if (!reader.isOk()) return reader.status();
  int total = 0;
  std::vector<int> ranksOfRun;
  for (int64_t id : runIds) {
    auto ranks = (*reader)->ranks(id);
    if (!ranks.isOk()) return ranks.status();
    ranksOfRun.push_back(static_cast<int>(ranks->size()));
    total += ranksOfRun.back();
  }
  std::vector<analysis::RunReport> reports;
  int before = 0;
  for (size_t i = 0; i < runIds.size(); ++i) {
    analysis::AnalysisOptions options;
    options.advice = true;  // the Charts' advice list
    options.onRankDone = [&](int32_t done, int32_t) {
      return !onRanks || onRanks(before + done, total);
    };
    auto report = analysis::analyzeRun(**reader, runIds[i], options);
    if (!report.isOk()) return report.status();
    reports.push_back(std::move(*report));
    before += ranksOfRun[i];
  }
  return reports;
}

}  // namespace

AnalysisWorker::AnalysisWorker(QObject* parent) : QObject(parent) {}

AnalysisWorker::~AnalysisWorker() {
  for (Job& job : jobs_) {
    job.cancelled->store(true);
    if (job.thread.joinable()) job.thread.join();
  }
}

void AnalysisWorker::joinFinished() {
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    if (it->done->load()) {
      it->thread.join();
      it = jobs_.erase(it);
    } else {
      ++it;
    }
  }
}

void AnalysisWorker::cancel() {
  ++generation_;
  busy_ = false;
  for (Job& job : jobs_) job.cancelled->store(true);
  joinFinished();
}

void AnalysisWorker::analyze(const QString& path, std::vector<int64_t> runIds) {
  cancel();
  busy_ = true;
  const uint64_t generation = generation_;
  Job job;
  job.cancelled = std::make_shared<std::atomic<bool>>(false);
  job.done = std::make_shared<std::atomic<bool>>(false);
  auto cancelled = job.cancelled;
  auto done = job.done;
  // The thread posts to `self`; the destructor joins it first, so `this`
  // outlives every post.
  QPointer<AnalysisWorker> self(this);
  job.thread = std::thread([self, path, runIds, cancelled, done, generation] {
    auto post = [&](auto fn) {
      QMetaObject::invokeMethod(
          self.data(),
          [self, generation, fn] {
            if (self && self->generation_ == generation) fn(self.data());
          },
          Qt::QueuedConnection);
    };
    auto result = analyzeRuns(path, runIds, [&](int d, int total) {
      if (cancelled->load()) return false;
      post([d, total](AnalysisWorker* w) { emit w->progress(d, total); });
      return true;
    });
    if (!cancelled->load()) {
      if (result.isOk()) {
        auto reports = std::make_shared<std::vector<analysis::RunReport>>(std::move(*result));
        post([reports](AnalysisWorker* w) {
          w->busy_ = false;
          emit w->finished(*reports);
        });
      } else {
        const QString message = QString::fromStdString(result.status().message());
        post([message](AnalysisWorker* w) {
          w->busy_ = false;
          emit w->failed(message);
        });
      }
    }
    done->store(true);
  });
  jobs_.push_back(std::move(job));
}

Result<std::vector<analysis::RunReport>> AnalysisWorker::analyzeNow(
    const QString& path, const std::vector<int64_t>& runIds) {
  return analyzeRuns(path, runIds, {});
}

}  // namespace bubblescope::gui
