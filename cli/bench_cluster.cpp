// `bubblescope-cli bench cluster`: the cluster cost model against published
// measurements (docs/prediction.md, "The cluster model: validation"): the
// weak-scaling rows of Narayanan et al., "Efficient Large-Scale Language
// Model Training on GPU Clusters Using Megatron-LM" (SC21), Table 1, on
// Selene (DGX A100 80 GB: the a100-80g profile), fp16, recompute on.
//
// Each row: planCluster with the paper's tp, pp, GPUs and global batch
// fixed, recompute on and no ZeRO (the paper's Megatron-LM had none); the
// planner picks the micro-batch size and schedule (interleaving and v) as
// the authors did. Printed: predicted vs published TFLOP/s per GPU (the
// paper's FLOPs F = 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)) over step ×
// GPUs), median and max |relative error|. Then, unless --no-fit, one
// global factor, the GEMM max efficiency, fitted to the table by least
// squares of the relative errors over a grid (the layouts chosen at the
// profile's efficiency kept), printed with its errors and those of the
// leave-one-out fits (each row predicted with the factor fitted to the
// other nine).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/run_description.h"
#include "common/median.h"
#include "planning/cluster_plan.h"
#include "storage/analysis/text_table.h"

namespace bubblescope::cli {
namespace {

struct BenchClusterArgs {
  std::string hardware = "a100-80g";
  double gemmEfficiency = 0;  // 0: the profile's
  bool noFit = false;  // --no-fit: the profile's numbers only
};

// Narayanan et al. (SC21), Table 1: model, tp, pp, GPUs, global batch,
// achieved TFLOP/s per GPU.
struct TableRow {
  const char* model;
  int32_t tp, pp, gpus;
  int64_t batch;
  double tflops;
};
constexpr TableRow kTable1[] = {
    {"megatron-1.7b", 1, 1, 32, 512, 137},      {"megatron-3.6b", 2, 1, 64, 512, 138},
    {"megatron-7.5b", 4, 1, 128, 512, 142},     {"megatron-18.4b", 8, 1, 256, 1024, 135},
    {"megatron-39.1b", 8, 2, 512, 1536, 138},   {"megatron-76.1b", 8, 4, 1024, 1792, 140},
    {"megatron-145.6b", 8, 8, 1536, 2304, 148}, {"megatron-310.1b", 8, 16, 1920, 2160, 155},
    {"megatron-529.6b", 8, 35, 2520, 2520, 163}, {"megatron-1t", 8, 64, 3072, 3072, 163},
};

double maxAbs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

std::vector<double> absAll(std::vector<double> v) {
  for (double& x : v) x = std::abs(x);
  return v;
}

std::string fixed(double x, int digits) {
  char text[48];
  std::snprintf(text, sizeof(text), "%.*f", digits, x);
  return text;
}

std::string signedPct(double x) {
  char text[32];
  std::snprintf(text, sizeof(text), "%+.1f%%", 100 * x);
  return text;
}

int fail(const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
}

// The fitted factor: least squares of the relative errors over `rows`
// (indices), on the grid whose predictions are tflops[g][row].
size_t bestGrid(const std::vector<std::vector<double>>& tflops, const std::vector<size_t>& rows) {
  size_t best = 0;
  double bestSum = -1;
  for (size_t g = 0; g < tflops.size(); ++g) {
    double sum = 0;
    for (size_t i : rows) {
      const double e = tflops[g][i] / kTable1[i].tflops - 1;
      sum += e * e;
    }
    if (bestSum < 0 || sum < bestSum) {
      bestSum = sum;
      best = g;
    }
  }
  return best;
}

ExitCode runBenchCluster(const BenchClusterArgs& a) {
  auto hw = layout::loadHardware(a.hardware);
  if (!hw.isOk()) return fail(hw.status().message());
  layout::ClusterSettings settings;
  settings.dtype = "fp16";
  settings.gemmEfficiency = a.gemmEfficiency;
  const double efficiency = a.gemmEfficiency > 0 ? a.gemmEfficiency : hw->gemmMaxEfficiency;
  std::printf("hardware: %s (%s, %s)\n", hw->name.c_str(), hw->deviceName.c_str(),
              hw->nodeName.c_str());
  std::printf("gemm_max_efficiency: %.3f (%s)\n", efficiency,
              a.gemmEfficiency > 0 ? "--gemm-efficiency" : "the profile's");
  std::vector<layout::Layout> chosen;
  std::vector<double> errors;
  analysis::TextTable t{{"model", "tp", "pp", "GPUs", "batch", "chosen", "b", "m", "published",
                         "predicted", "error"},
                        {},
                        true};
  for (const TableRow& row : kTable1) {
    layout::ClusterPlanRequest r;
    r.hardware = *hw;
    auto model = layout::modelPreset(row.model);
    if (!model.isOk()) return fail(model.status().message());
    r.model = *model;
    r.gpus = row.gpus;
    r.globalBatch = row.batch;
    r.settings = settings;
    r.tp = row.tp;
    r.pp = row.pp;
    r.recompute = true;
    r.zeroStages = {layout::ZeroStage::kNone};
    r.top = 1;
    r.simulated = 8;
    auto plan = layout::planCluster(r);
    if (!plan.isOk()) return fail(std::string(row.model) + ": " + plan.status().message());
    const layout::ClusterCandidate& c = plan->best.front();
    chosen.push_back(c.layout);
    const double e = c.tflopsPerGpu / row.tflops - 1;
    errors.push_back(e);
    std::string schedule = row.pp > 1 ? layout::scheduleKindName(c.layout.schedule) : "-";
    if (c.layout.virtualChunks > 1) schedule += " v" + std::to_string(c.layout.virtualChunks);
    t.rows.push_back({row.model, std::to_string(row.tp), std::to_string(row.pp),
                      std::to_string(row.gpus), std::to_string(row.batch), schedule,
                      std::to_string(c.layout.microBatchSize),
                      std::to_string(c.layout.microBatches), fixed(row.tflops, 0),
                      fixed(c.tflopsPerGpu, 1), signedPct(e)});
  }
  std::fputs(t.render(false).c_str(), stdout);
  std::printf("median_abs_rel_error: %.4f\n", median(absAll(errors)));
  std::printf("max_abs_rel_error: %.4f\n", maxAbs(errors));
  if (a.noFit) return 0;

  // One global factor: the GEMM max efficiency on a grid, the layouts kept.
  std::vector<double> grid;
  for (int32_t i = 0; i <= 50; ++i) grid.push_back(0.45 + 0.01 * i);
  std::vector<std::vector<double>> tflops(grid.size(), std::vector<double>(chosen.size()));
  for (size_t g = 0; g < grid.size(); ++g) {
    layout::ClusterSettings s = settings;
    s.gemmEfficiency = grid[g];
    for (size_t i = 0; i < chosen.size(); ++i) {
      auto p = layout::predictCluster(chosen[i], *hw, s);
      if (!p.isOk()) return fail(p.status().message());
      tflops[g][i] = layout::clusterTflopsPerGpu(chosen[i], p->stepNs);
    }
  }
  std::vector<size_t> all(chosen.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  const size_t g = bestGrid(tflops, all);
  std::vector<double> fitted, loo;
  analysis::TextTable f{{"model", "published", "fitted", "error", "leave-one-out factor", "error"},
                        {},
                        false};
  for (size_t i = 0; i < chosen.size(); ++i) {
    std::vector<size_t> others;
    for (size_t j : all) {
      if (j != i) others.push_back(j);
    }
    const size_t gi = bestGrid(tflops, others);
    fitted.push_back(tflops[g][i] / kTable1[i].tflops - 1);
    loo.push_back(tflops[gi][i] / kTable1[i].tflops - 1);
    f.rows.push_back({kTable1[i].model, fixed(kTable1[i].tflops, 0), fixed(tflops[g][i], 1),
                      signedPct(fitted.back()), fixed(grid[gi], 2), signedPct(loo.back())});
  }
  std::printf("\nfitted: one global factor, the GEMM max efficiency, least squares of the "
              "relative errors over the 10 rows (grid 0.45..0.95 by 0.01; layouts as chosen "
              "above)\n");
  std::fputs(f.render(false).c_str(), stdout);
  std::printf("fitted_gemm_max_efficiency: %.2f\n", grid[g]);
  std::printf("fitted_median_abs_rel_error: %.4f\n", median(absAll(fitted)));
  std::printf("fitted_max_abs_rel_error: %.4f\n", maxAbs(fitted));
  std::printf("leave_one_out_median_abs_rel_error: %.4f\n", median(absAll(loo)));
  std::printf("leave_one_out_max_abs_rel_error: %.4f\n", maxAbs(loo));
  return 0;
}

}  // namespace

void addBenchCluster(Command bench, CommandRunner& runner) {
  auto args = std::make_shared<BenchClusterArgs>();
  Command cmd = bench.subcommand(
      "cluster",
      "The cluster cost model against Megatron-LM's published runs (SC21 Table 1): TFLOP/s per "
      "GPU predicted vs published");
  cmd.option("--hardware", args->hardware, "Hardware profile of the runs (Selene: a100-80g)")
      .showDefault();
  cmd.option("--gemm-efficiency", args->gemmEfficiency,
             "GEMM max efficiency instead of the profile's")
      .range(0.01, 1.0);
  cmd.flag("--no-fit", args->noFit,
           "Skip fitting the one global factor (the GEMM max efficiency) and its leave-one-out "
           "errors");
  cmd.callback([args, &runner] { runner = [args] { return runBenchCluster(*args); }; });
}

}  // namespace bubblescope::cli
