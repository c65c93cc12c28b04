// The real Nsight Systems 2022.2 export of ../shared/fixtures/nsys (MPI +
// CUDA saxpy, rank 0 on an A100; see its README), read where it lies; the
// expected figures are SQL over the same file (sqlite3), not the importer's.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include "fixture_paths.h"  // generated: BUBBLESCOPE_NSYS_FIXTURES
#include "storage/analysis/imported_layout.h"
#include "storage/analysis/run_analyzer.h"
#include "storage/import/trace_import.h"
#include "storage/trace_reader.h"
#include "storage/trace_writer.h"
#include "tests/import/imported_runs.h"
#include "tests/storage/temp_dir.h"

namespace bubblescope::import {
namespace {

const std::string kSaxpy = std::string(BUBBLESCOPE_NSYS_FIXTURES) + "/saxpy-mpi-cuda-rank0.sqlite";
constexpr int64_t kSessionStartNs = 1687813257637297504;  // TARGET_INFO_SESSION_START_TIME

#define BS_REQUIRE_NSYS_FIXTURE()                                                    \
  do {                                                                               \
    if (!std::filesystem::exists(kSaxpy)) {                                          \
      GTEST_SKIP() << "Nsight Systems fixture not found at " << kSaxpy               \
                   << " (../shared/fixtures/nsys is not part of the repository)";    \
    }                                                                                \
  } while (0)

TEST(NsysFixtureImport, Saxpy2022ImportsWithExactKernelTime) {
  BS_REQUIRE_NSYS_FIXTURE();
  bubblescope::testing::TempDir dir;
  const std::string db = dir.file("t.db");
  Result<ImportSummary> s = Status::internal("not run");
  {
    auto writer = storage::TraceWriter::open(db);
    ASSERT_TRUE(writer.isOk());
    s = importTraces(**writer, {kSaxpy}, {});
  }
  ASSERT_TRUE(s.isOk()) << s.status().message();
  ASSERT_EQ(s->files.size(), 1u);
  const ImportedFile& f = s->files[0];
  EXPECT_EQ(f.rank, 0);
  EXPECT_EQ(f.rankSource, "NVTX thread name");  // "MPI Rank 0"; the file has no MPI_RANKS
  EXPECT_EQ(f.device, "cuda:0");
  EXPECT_EQ(f.gpuName, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(f.host, "nid001608");
  EXPECT_EQ(f.baseTimeNs, kSessionStartNs);
  // SELECT COUNT(*) ... of each table.
  EXPECT_EQ(f.stats.kernels, 5);
  EXPECT_EQ(f.stats.ncclKernels, 0);
  EXPECT_EQ(f.stats.memcpys, 15);
  EXPECT_EQ(f.stats.memsets, 0);
  EXPECT_EQ(f.stats.runtimeCalls, 95);
  EXPECT_EQ(f.stats.cpuOps, 22);  // NVTX push/pop ranges (MPI_Init, MPI_Send, ..., saxpy)
  EXPECT_EQ(f.stats.steps, 0);

  auto reader = storage::TraceReader::open(db);
  ASSERT_TRUE(reader.isOk());
  auto runs = (*reader)->runs();
  ASSERT_TRUE(runs.isOk());
  EXPECT_NE(analysis::importedLayoutSummary((*runs)[0].info)
                .find("(Nsight Systems 2022.2.1.31, export schema 2.9.1): 1 file of world 1"),
            std::string::npos)
      << analysis::importedLayoutSummary((*runs)[0].info);
  int64_t kernelNs = 0, firstKernel = INT64_MAX, copied = 0;
  std::map<int64_t, int> launches;
  std::set<int64_t> gpuCorrelations;
  for (const auto& e : testing::allEvents(**reader, s->runId)) {
    if (e.kind == trace_model::EventKind::kKernel) {
      kernelNs += e.endNs - e.startNs;
      firstKernel = std::min(firstKernel, e.startNs);
      EXPECT_EQ(e.name, "saxpy(double *, double *, double *, double, int)");
      EXPECT_EQ(e.lane, trace_model::gpuStreamLane(7));
    }
    if (e.kind == trace_model::EventKind::kMemcpy) copied += e.bytes;
    if (e.lane == trace_model::Lane::kCudaApi && e.correlationId != 0) ++launches[e.correlationId];
    if (trace_model::isGpuStreamLane(e.lane)) gpuCorrelations.insert(e.correlationId);
  }
  // SELECT SUM(end - start), MIN(start) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE deviceId = 0
  EXPECT_EQ(kernelNs, 88573480);
  EXPECT_EQ(firstKernel, kSessionStartNs + 924922186);
  EXPECT_EQ(copied, 3932160000);  // SELECT SUM(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY
  EXPECT_EQ(gpuCorrelations.size(), 20u);
  for (int64_t c : gpuCorrelations) EXPECT_EQ(launches[c], 1) << "correlation " << c;

  auto report = analysis::analyzeRun(**reader, s->runId);
  ASSERT_TRUE(report.isOk()) << report.status().message();
  ASSERT_EQ(report->ranks.size(), 1u);
  ASSERT_TRUE(report->ranks[0].gpu.has_value());
  // report's kernel time on device 0: the 5 saxpy kernels run one after the
  // other on one stream, in the rank's one step, so the compute union is
  // their sum: SELECT SUM(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL
  // WHERE deviceId = 0.
  EXPECT_EQ(report->ranks[0].gpu->computeNs, 88573480);
  EXPECT_EQ(report->ranks[0].gpu->commNs, 0);
}

}  // namespace
}  // namespace bubblescope::import
