// The dependency table of docs/architecture.md (docs/design.md,
// "Module rules") as data, for architecture_test.cpp.
//
// A module is a top-level folder (engine/layout is its own module, the bottom
// library). An edge is an `#include "folder/..."` or `#include <external>`
// line in a module's source, or a target_link_libraries() (or a test's LIBS)
// line in its CMakeLists.txt. Every edge must be allowed below.
#pragma once

#include <string>
#include <vector>

namespace bubblescope::architecture {

struct ModuleRule {
  std::string module;
  std::vector<std::string> mayUse;  // other modules and external classes
};

// External classes: mpi, sqlite, qt, cuda (runtime, cuBLAS, CUPTI, NCCL),
// blas, cli11. The standard library, nlohmann_json, POSIX headers, GoogleTest
// and Threads are allowed everywhere.
inline const std::vector<ModuleRule> kRules = {
    {"common", {}},
    {"trace_model", {"common"}},
    // Pure: no MPI, no SQLite, no Qt, no BLAS, no CUDA.
    {"layout", {"common"}},
    // What a layout costs and which to choose; pure too. The engine runtime
    // never plans.
    {"planning", {"common", "layout"}},
    {"tracer", {"common", "trace_model", "mpi", "cuda"}},
    // The engine never writes SQL and never shows anything.
    {"engine", {"common", "trace_model", "layout", "tracer", "mpi", "cuda", "blas"}},
    // Storage may use the trace model and engine/layout, not the engine runtime.
    {"storage", {"common", "trace_model", "layout", "planning", "sqlite"}},
    // The CLI reaches SQLite only through storage.
    {"cli",
     {"common", "trace_model", "layout", "planning", "tracer", "engine", "storage", "mpi", "cli11"}},
    // The GUI never links the engine runtime or the tracer; it reads the store.
    {"gui", {"common", "trace_model", "layout", "planning", "storage", "qt"}},
    // Tests may use anything but the GUI (tests/gui may).
    {"tests",
     {"common", "trace_model", "layout", "planning", "tracer", "engine", "storage", "cli", "mpi",
      "sqlite",
      "qt", "cuda", "blas", "cli11"}},
};

// Edges between parts of one module that the table forbids: the parallel
// layer reaches devices through the Backend, never the CUDA back end's files.
struct PathRule {
  std::string fromPrefix, toPrefix, why;
};
inline const std::vector<PathRule> kForbiddenPaths = {
    {"engine/parallel/", "engine/cuda/", "engine/parallel uses devices through the Backend"},
};

// Known breaks, each named and commented; the test fails on any edge not
// allowed and not listed here. `from` is a module or a path prefix, `to` a
// module, external class or path prefix. Remove an entry when its break is
// fixed (the test reports entries that match nothing). None today: the last
// one (the NCCL communicator calling CUDA from engine/parallel) went when the
// communicator moved to engine/cuda.
struct KnownException {
  std::string from, to, why;
};
inline const std::vector<KnownException> kKnownExceptions = {};

// A library is a folder of sources; a path belongs to the most specific one
// (engine/parallel/x.h to engine/parallel, not engine). Its public headers are
// the only ones of the folder that a file of another folder may include; the
// rest are its private implementation. Tests mirror the source folders (below)
// and may include the private headers of the libraries they test.
struct Library {
  std::string folder;
  std::vector<std::string> publicHeaders;  // file names inside the folder
};
inline const std::vector<Library> kLibraries = {
    {"common", {"median.h", "rank_correlation.h", "result.h", "status.h", "value_range.h"}},
    // Plain values of the trace: events, kinds, lanes, windows, interval sets.
    {"trace_model",
     {"event.h", "interval_set.h", "sink.h", "step_window.h", "kernel_type.h", "kernel_category.h",
      "profiler_step.h"}},
    // The bottom library: the layout, its schedules, formulas and simulator.
    {"engine/layout",
     {"layout.h", "model_config.h", "zero_stage.h", "op.h", "schedule.h", "grid.h",
      "stage_split.h", "moe_samples.h", "grad_comm.h", "hostfile.h", "strict_json.h",
      "global_batch.h",
      // planning/hardware.cpp reads the profiles compiled in beside the presets.
      "embedded_profiles.h"}},
    // The cost of a layout: formulas, the schedule simulator, calibrations,
    // the predictor, the planners, the cluster model and its hardware.
    {"planning",
     {"simulator.h", "schedule_playback.h", "formulas.h", "calibration.h", "prediction.h",
      "prediction_summary.h",
      "planner.h", "expert_parallel_volume.h", "grad_reduction_cost.h", "link_class.h",
      "core_sharing.h", "tp_stretch_fit.h", "step_end_wait_fit.h", "contention.h", "machine_drift.h",
      "activation_bytes.h",
      "hardware.h", "cluster_cost.h", "cluster_plan.h"}},
    // Capture only: the recorder, the clock, a rank's trace session, a GPU
    // rank's activity source, its events and its streams' dimensions.
    {"tracer",
     {"recorder.h", "clock.h", "trace_session.h", "gpu_collector.h", "gpu_activity.h",
      "gpu_event_collector.h", "stream_dims.h", "gpu_identity.h", "nvml_device.h",
      "nvml_sampler.h"}},
    // The model, its tensors on a Backend, the optimizer, data and checkpoints.
    {"engine",
     {"allocator.h", "memory_counter.h", "backend.h", "backend_factory.h", "device_selection.h", "cpu_backend.h",
      "cpu_gemm.h", "adamw.h", "parameter.h", "tensor_shard.h", "gpt_model.h", "tensor_parallel.h", "expert_parallel.h",
      "data_loader.h", "trainer_options.h", "checkpoint.h", "safetensors.h", "rng.h"}},
    // The rank trainer and the process groups it is given.
    {"engine/parallel",
     {"rank_trainer.h", "communicator.h", "mpi_communicator.h", "mpi_grid.h", "mpi_check.h",
      "device_groups.h",
      "host_staged_communicator.h", "layout_options.h", "data_parallel.h", "bucket_reduction.h",
      "node_groups.h", "codec_benchmark.h"}},
    // The CUDA back end, reached through engine/backend_factory.h.
    {"engine/cuda", {"cuda_backend.h", "nccl_communicator.h"}},
    // The trace file: writing, reading, a run's description, simulated runs.
    {"storage",
     {"trace_writer.h", "trace_reader.h", "run_info.h", "simulated_run.h", "process_identity.h",
      "insert_baseline.h", "calibration_store.h", "space_reserve.h",
      // storage/import reads Nsight Systems exports through it.
      "sqlite_db.h"}},
    // Metrics, reports and exports computed from the store.
    {"storage/analysis",
     {"run_analyzer.h", "run_report.h", "run_layout.h", "run_comparison.h", "measured_step.h",
      "bubbles.h", "report_text.h", "report_json.h", "text_table.h", "chrome_export.h",
      "kineto_export.h", "imported_layout.h", "measured_ops.h", "run_calibration.h",
      "ideal_replay.h", "calibration_text.h", "moe_load.h", "moe_comm.h", "moe_advice.h",
      "advice.h", "parallel_ranks.h",
      // The app's Kernels table reads a rank's kernels through it (topKernels).
      "kernel_breakdown.h"}},
    // Kineto / PyTorch profiler traces and Nsight Systems exports into the store.
    {"storage/import",
     {"kineto_importer.h", "kineto_parser.h", "nccl_collective.h", "trace_file_stream.h",
      "import_summary.h", "trace_import.h", "nsys_importer.h", "nsys_steps.h"}},
    // The two programs: nothing of theirs is used elsewhere.
    {"cli", {}},
    {"gui", {}},
};

// Tests mirror the source folders: tests/<folder> tests the libraries named
// here (white-box: it may include their private headers). Every folder under
// tests/ is listed.
struct TestMirror {
  std::string testFolder;              // under tests/
  std::vector<std::string> libraries;  // Library::folder values
};
inline const std::vector<TestMirror> kTestMirrors = {
    {"common", {"common"}},
    {"trace_model", {"trace_model"}},
    // The layout and the planning code over it (one suite, layout_test, and
    // cluster_test).
    {"layout", {"engine/layout", "planning"}},
    {"tracer", {"tracer"}},
    {"tracer_mpi", {"tracer"}},  // the MPI half of the tracer's tests
    {"engine", {"engine"}},
    {"parallel", {"engine/parallel"}},
    // The CUDA back end (checked against the CPU kernels) and the CUPTI collector.
    {"gpu", {"engine/cuda", "engine", "tracer"}},
    {"storage", {"storage"}},
    {"analysis", {"storage/analysis"}},
    {"import", {"storage/import"}},
    {"cli", {"cli"}},
    {"gui", {"gui"}},
    // Scripts over the built programs: several hosts made of namespaces
    // (the launcher, the collector, clock alignment); a real Slurm.
    {"multihost", {"cli", "tracer"}},
    // The fuzz harness: mutated layouts, argument vectors and traces against
    // the built programs and the layout and storage parsers.
    {"fuzz", {"cli", "engine/layout", "planning", "storage"}},
    {"slurm", {"cli"}},
    {"reference", {}},     // scripts over the built programs
    {"architecture", {}},  // this test
};

}  // namespace bubblescope::architecture
