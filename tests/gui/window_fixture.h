// WindowFixture: a MainWindow at 1400 x 900 on a trace holding one pipeline
// run, with AppendingLauncher as its launcher (a started run appends a
// pipeline run to the trace and stays running until finish(code)). Shared by
// the main window's test files, so one fixture type serves one test suite.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "gui/main_window.h"
#include "gui/run_launcher.h"
#include "storage/trace_reader.h"
#include "tests/gui/pipeline_trace.h"
#include "tests/storage/temp_dir.h"

namespace bubblescope::gui::testing_window {

// Appends a run to the trace when started; finishes when the test says.
class AppendingLauncher : public RunLauncher {
 public:
  explicit AppendingLauncher(std::string path) : path_(std::move(path)) {}
  Status start(const RunRequest& request) override {
    requests.push_back(request);
    running_ = true;
    bubblescope::testing::writePipelineRun(path_, 5000);
    auto reader = storage::TraceReader::open(path_);
    auto runs = reader.isOk() ? (*reader)->runs()
                              : Result<std::vector<storage::RunRecord>>(reader.status());
    if (runs.isOk() && !runs->empty()) emit runBegun(runs->back().id);  // as `run` says run_id
    emit outputLine("step 1/2 | loss 5.0000 | 100 tok/s");
    return Status::ok();
  }
  void stop() override { stopAsked = true; }
  bool isRunning() const override { return running_; }
  void finish(int code) {
    running_ = false;
    emit finished(code, code == 0 ? QString() : QStringLiteral("error: rank 1 failed"));
  }
  std::vector<RunRequest> requests;
  bool stopAsked = false;

 private:
  std::string path_;
  bool running_ = false;
};

struct WindowFixture : ::testing::Test {
  bubblescope::testing::TempDir dir;
  std::string path = dir.file("runs.db");
  AppendingLauncher* launcher = nullptr;
  std::unique_ptr<MainWindow> window;

  void SetUp() override {
    bubblescope::testing::writePipelineRun(path);
    auto l = std::make_unique<AppendingLauncher>(path);
    launcher = l.get();
    window = std::make_unique<MainWindow>(std::move(l));
    window->resize(1400, 900);
    ASSERT_TRUE(window->openFile(QString::fromStdString(path)).isOk());
  }
};

}  // namespace bubblescope::gui::testing_window
