// Holistic Trace Analysis's GPU figures (gpu_time_analyzer.h) on synthetic
// Kineto traces written here: GPU records whose launch is absent, several
// streams, overlapping collectives, a period with only memory copies, work
// launched after the last step. Every expected figure is worked out by hand
// from HTA's definitions in the comments (times in µs of the trace); HTA
// 0.5.0 itself gives the same figures on the same file (docs/analysis.md).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "storage/analysis/run_analyzer.h"
#include "tests/import/imported_runs.h"
#include "tests/storage/temp_dir.h"
#include "trace_model/kernel_type.h"
#include "trace_model/profiler_step.h"

namespace bubblescope::import {
namespace {

using analysis::GpuStreamIdle;
using analysis::GpuTime;

// One trace event of the synthetic traces.
struct Ev {
  std::string cat, name;
  double ts, dur;
  int64_t correlation = -1;  // -1: none
  int64_t stream = -1;       // GPU records only
};

std::string traceJson(const std::vector<Ev>& events) {
  std::string out = R"({"schemaVersion": 1, "traceEvents": [)";
  for (size_t i = 0; i < events.size(); ++i) {
    const Ev& e = events[i];
    const bool gpu = e.stream >= 0;
    char line[512];
    std::snprintf(line, sizeof line,
                  R"(%s{"ph": "X", "cat": "%s", "name": "%s", "pid": %d, "tid": %lld, )"
                  R"("ts": %.3f, "dur": %.3f, "args": {)",
                  i ? ",\n" : "\n", e.cat.c_str(), e.name.c_str(), gpu ? 0 : 4242,
                  static_cast<long long>(gpu ? e.stream : 4242), e.ts, e.dur);
    out += line;
    std::string args;
    // Kineto writes no stream into a GPU annotation's args (its tid is the stream).
    if (gpu && e.cat != "gpu_user_annotation") {
      args += R"("device": 0, "stream": )" + std::to_string(e.stream);
    }
    if (e.correlation >= 0) {
      args += std::string(args.empty() ? "" : ", ") + R"("correlation": )" +
              std::to_string(e.correlation);
    }
    out += args + "}}";
  }
  return out + "\n]}\n";
}

std::string writeTrace(const testing::TempDir& dir, const std::string& name,
                       const std::vector<Ev>& events) {
  const std::string path = dir.file(name);
  std::ofstream(path) << traceJson(events);
  return path;
}

Ev step(int n, double ts, double dur) {
  return {"user_annotation", "ProfilerStep#" + std::to_string(n), ts, dur};
}
Ev launch(int64_t correlation, double ts) {
  return {"cuda_runtime", "cudaLaunchKernel", ts, 2, correlation};
}
Ev gpu(const std::string& cat, const std::string& name, int64_t stream, int64_t correlation,
       double ts, double end) {
  return {cat, name, ts, end - ts, correlation, stream};
}

// Three ProfilerSteps, CPU [100, 200), [200, 300), [300, 400) µs.
std::vector<Ev> threeStepTrace() {
  return {
      step(1, 100, 100),
      step(2, 200, 100),
      step(3, 300, 100),
      // Launched before the profiler started (no cudaLaunchKernel of 5).
      gpu("kernel", "gemm_prev", 7, 5, 90, 130),
      // Step 1.
      launch(11, 105),
      gpu("kernel", "gemm_a", 7, 11, 130, 160),
      launch(12, 110),
      gpu("kernel", "ncclKernel_AllReduce_RING_LL_Sum_float", 20, 12, 140, 180),
      launch(13, 115),
      gpu("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 7, 13, 160, 170),
      launch(15, 116),
      gpu("kernel", "at::native::SyncBatchNormElementwise", 21, 15, 185, 195),  // HTA: other
      launch(14, 175),
      gpu("kernel", "elementwise_add", 7, 14, 180, 190),
      // Step 2: only copies on [210, 230).
      launch(21, 205),
      gpu("gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", 7, 21, 210, 230),
      launch(22, 206),
      gpu("gpu_memset", "Memset (Device)", 21, 22, 215, 225),
      launch(23, 207),
      gpu("kernel", "gemm_b", 7, 23, 235, 260),
      launch(24, 208),
      gpu("kernel", "ncclDevKernel_AllGather_RING_LL", 20, 24, 240, 300),
      launch(25, 209),
      gpu("kernel", "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL", 22, 25, 250, 270),
      // Step 3.
      launch(31, 305),
      gpu("kernel", "gemm_c", 7, 31, 310, 350),
      launch(32, 306),
      gpu("kernel", "softmax", 7, 32, 400, 420),
      // After the last step: counted with it (as HTA 0.5 does), not without.
      launch(41, 410),
      gpu("kernel", "tail", 7, 41, 430, 440),
      // A GPU annotation on a stream does not count.
      {"gpu_user_annotation", "## forward ##", 95, 400, -1, 7},
  };
}

analysis::RunReport analyse(const testing::Imported& imported, bool includeLastStep) {
  analysis::AnalysisOptions options;
  options.includeLastProfilerStep = includeLastStep;
  auto report = analysis::analyzeRun(*imported.reader, imported.summary.runId, options);
  EXPECT_TRUE(report.isOk()) << report.status().message();
  return report.isOk() ? *report : analysis::RunReport{};
}

constexpr int64_t kUs = 1000;

void expectIdle(const GpuTime& g, int32_t stream, int64_t hostUs, int64_t kernelUs,
                int64_t otherUs) {
  for (const GpuStreamIdle& s : g.idle) {
    if (s.stream != stream) continue;
    EXPECT_EQ(s.hostWaitNs, hostUs * kUs) << "stream " << stream;
    EXPECT_EQ(s.kernelWaitNs, kernelUs * kUs) << "stream " << stream;
    EXPECT_EQ(s.otherNs, otherUs * kUs) << "stream " << stream;
    return;
  }
  ADD_FAILURE() << "no idle breakdown for stream " << stream;
}

TEST(HtaParityImport, LastStepIncludedCountsWhatWasLaunchedUpToItsEnd) {
  testing::TempDir dir;
  auto imported =
      testing::importPaths(dir.file("t.db"), {writeTrace(dir, "rank-0.json", threeStepTrace())});
  ASSERT_TRUE(imported.isOk()) << imported.status().message();
  const analysis::RunReport report = analyse(*imported, true);
  ASSERT_EQ(report.ranks.size(), 1u);
  ASSERT_TRUE(report.ranks[0].gpu);
  const GpuTime& g = *report.ranks[0].gpu;
  // Counted: every record whose launch is in the trace, tail (launched at
  // 410, after the last step) too; not gemm_prev (no launch). First start
  // 130, last end 440.
  EXPECT_EQ(g.windowNs, 310 * kUs);
  // ∪: [130,195) 65 + [210,230) 20 + [235,300) 65 + [310,350) 40 + [400,420)
  // 20 + [430,440) 10.
  EXPECT_EQ(g.busyNs, 220 * kUs);
  EXPECT_EQ(g.idleNs(), 90 * kUs);
  // Computation: gemm_a 30, elementwise 10, gemm_b 25, gemm_c 40, softmax
  // 20, tail 10 (the SyncBatchNorm kernel is HTA's "other": its name has
  // "Sync").
  EXPECT_EQ(g.computeNs, 135 * kUs);
  EXPECT_EQ(g.nonComputeNs(), 85 * kUs);
  // Communication [140,180) 40 + [240,300) 60 (the reduce-scatter lies under
  // the all-gather); under compute [140,160) and [240,260).
  EXPECT_EQ(g.commNs, 100 * kUs);
  EXPECT_EQ(g.overlapNs, 40 * kUs);
  EXPECT_EQ(g.steps, 3);
  // Stream 7: 160 gap 0 kernel wait; 180 launched at 175 > 170: host 10;
  // 210 launched at 205 > 190: host 20; 235 gap 5 < 30: kernel wait; 310
  // launched at 305 > 260: host 50; 400 launched at 306 < 350, gap 50:
  // other; 430 launched at 410 < 420, gap 10: kernel wait.
  ASSERT_EQ(g.idle.size(), 4u);
  expectIdle(g, 7, 80, 15, 50);
  expectIdle(g, 20, 60, 0, 0);  // 240 launched at 208 > 180
  expectIdle(g, 21, 20, 0, 0);  // 215 launched at 206 > 195
  expectIdle(g, 22, 0, 0, 0);   // one record: no gap
  ASSERT_EQ(g.launchedBeforeProfile.size(), 1u);
  EXPECT_EQ(g.launchedBeforeProfile[0].stream, 7);
  EXPECT_EQ(g.launchedBeforeProfile[0].records, 1);
  EXPECT_EQ(g.launchedBeforeProfile[0].ns, 40 * kUs);
}

TEST(HtaParityImport, LastStepExcludedCountsWhatWasLaunchedBeforeItsStart) {
  testing::TempDir dir;
  auto imported =
      testing::importPaths(dir.file("t.db"), {writeTrace(dir, "rank-0.json", threeStepTrace())});
  ASSERT_TRUE(imported.isOk()) << imported.status().message();
  const analysis::RunReport report = analyse(*imported, false);
  ASSERT_TRUE(report.ranks.at(0).gpu);
  const GpuTime& g = *report.ranks[0].gpu;
  // Launched before 300: steps 1 and 2. First start 130, last end 300.
  EXPECT_EQ(g.windowNs, 170 * kUs);
  EXPECT_EQ(g.busyNs, 150 * kUs);    // 65 + 20 + 65
  EXPECT_EQ(g.computeNs, 65 * kUs);  // 30 + 10 + 25
  EXPECT_EQ(g.commNs, 100 * kUs);
  EXPECT_EQ(g.overlapNs, 40 * kUs);
  EXPECT_EQ(g.steps, 2);
  expectIdle(g, 7, 30, 5, 0);
  expectIdle(g, 20, 60, 0, 0);
  expectIdle(g, 21, 20, 0, 0);
}

// With a single ProfilerStep HTA applies no launch cut: every stream record
// counts, the launch-less ones and those launched after the step included.
TEST(HtaParityImport, OneStepCountsEveryRecord) {
  testing::TempDir dir;
  std::vector<Ev> events;
  for (const Ev& e : threeStepTrace()) {
    if (e.name != "ProfilerStep#2" && e.name != "ProfilerStep#3") events.push_back(e);
  }
  auto imported = testing::importPaths(dir.file("t.db"), {writeTrace(dir, "rank-0.json", events)});
  ASSERT_TRUE(imported.isOk()) << imported.status().message();
  for (bool include : {true, false}) {
    const analysis::RunReport report = analyse(*imported, include);
    ASSERT_TRUE(report.ranks.at(0).gpu);
    const GpuTime& g = *report.ranks[0].gpu;
    EXPECT_FALSE(g.launchCut);
    // First start 90 (gemm_prev), last end 440 (tail): 350; gemm_prev adds
    // [90,130) 40 to the busy and the compute time above.
    EXPECT_EQ(g.windowNs, 350 * kUs);
    EXPECT_EQ(g.busyNs, 260 * kUs);
    EXPECT_EQ(g.computeNs, 175 * kUs);
    EXPECT_TRUE(g.launchedBeforeProfile.empty());
  }
}

// Without the last step, work launched after the latest step seen so far
// began is settled only by the step that follows (or by the end).
TEST(HtaParityImport, WithoutTheLastStepWorkCountsOnlyIfAnotherStepFollows) {
  testing::TempDir dir;
  std::vector<Ev> events = {
      step(1, 100, 50),  // [100, 150)
      launch(1, 110),
      gpu("kernel", "a", 7, 1, 120, 140),
      launch(2, 160),  // between the steps
      gpu("kernel", "b", 7, 2, 170, 180),
      step(2, 200, 50),  // [200, 250): b counts in both modes
      launch(3, 210),
      gpu("kernel", "c", 7, 3, 215, 230),
      launch(4, 260),  // after the last step: counts with it only
      gpu("kernel", "d", 7, 4, 270, 290),
  };
  auto imported = testing::importPaths(dir.file("t.db"), {writeTrace(dir, "rank-0.json", events)});
  ASSERT_TRUE(imported.isOk()) << imported.status().message();
  const analysis::RunReport include = analyse(*imported, true);
  ASSERT_TRUE(include.ranks.at(0).gpu);
  EXPECT_EQ(include.ranks[0].gpu->windowNs, 170 * kUs);  // 120 to 290: every launch
  EXPECT_EQ(include.ranks[0].gpu->busyNs, 65 * kUs);     // a 20, b 10, c 15, d 20
  const analysis::RunReport exclude = analyse(*imported, false);
  ASSERT_TRUE(exclude.ranks.at(0).gpu);
  EXPECT_EQ(exclude.ranks[0].gpu->windowNs, 60 * kUs);  // 120 to 180
  EXPECT_EQ(exclude.ranks[0].gpu->busyNs, 30 * kUs);    // a, b
}

// HTA's get_kernel_type and its ProfilerStep pattern, name by name.
TEST(HtaParityImport, KernelTypesAndStepNamesFollowHta) {
  using trace_model::EventKind;
  using trace_model::KernelType;
  using trace_model::kernelTypeOf;
  using trace_model::kernelTypeOfName;
  EXPECT_EQ(kernelTypeOfName("ncclKernel_AllReduce_RING_LL_Sum_float"), KernelType::kCommunication);
  EXPECT_EQ(kernelTypeOfName("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"),
            KernelType::kCommunication);
  EXPECT_EQ(kernelTypeOfName("nccl_copy"), KernelType::kComputation);
  EXPECT_EQ(kernelTypeOfName("Memcpy HtoD (Pageable -> Device)"), KernelType::kMemory);
  EXPECT_EQ(kernelTypeOfName("Memset (Device)"), KernelType::kMemory);
  EXPECT_EQ(kernelTypeOfName("dma_copy"), KernelType::kMemory);
  EXPECT_EQ(kernelTypeOfName("void cutlass::Kernel<MemcpyLike>"), KernelType::kOther);
  EXPECT_EQ(kernelTypeOfName("SyncBatchNorm"), KernelType::kOther);
  EXPECT_EQ(kernelTypeOfName("ampere_sgemm_128x64_tn"), KernelType::kComputation);
  EXPECT_EQ(kernelTypeOfName("memcpy"), KernelType::kComputation);  // HTA reads names only
  // The stored kind decides where the name may not say (the CUPTI tracer's "memcpy").
  EXPECT_EQ(kernelTypeOf(EventKind::kMemcpy, "memcpy"), KernelType::kMemory);
  EXPECT_EQ(kernelTypeOf(EventKind::kAllReduce, "allreduce"), KernelType::kCommunication);
  EXPECT_EQ(kernelTypeOf(EventKind::kKernel, "at::SyncKernel"), KernelType::kOther);

  EXPECT_EQ(trace_model::profilerStepNumber("ProfilerStep#12"), 12);
  EXPECT_EQ(trace_model::profilerStepNumber("ProfilerStep # 3"), 3);
  EXPECT_FALSE(trace_model::profilerStepNumber("ProfilerStep#"));
  EXPECT_FALSE(trace_model::profilerStepNumber("MyProfilerStep#1"));
  EXPECT_FALSE(trace_model::profilerStepNumber("ProfilerStep#1234567890"));
}

}  // namespace
}  // namespace bubblescope::import
