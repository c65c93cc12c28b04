#include "cli/layout_flags.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "cli/backend_option.h"
#include "engine/layout/layout.h"
#include "engine/layout/strict_json.h"

namespace bubblescope::cli {

void addMoeFlags(Command cmd, MoeFlags& flags) {
  cmd.option("--experts", flags.experts,
             "Mixture of experts: E experts in every MoE block (0: dense)");
  cmd.option("--top-k", flags.topK, "Experts per token: 1 (Switch) or 2 (GShard)");
  cmd.option("--capacity-factor", flags.capacityFactor,
             "Expert capacity = ceil(factor * tokens * top_k / E); default 1.0");
  cmd.option("--moe-every", flags.moeEvery, "Every N-th block is MoE, the others dense");
  cmd.option("--aux-loss-coef", flags.auxLossCoef,
             "Coefficient of the load-balancing loss; default 0.01");
}

void MoeFlags::applyTo(nlohmann::json& model) const {
  auto set = [&model](const char* key, const auto& value) {
    if (value) model[key] = *value;
  };
  set("experts", experts);
  set("top_k", topK);
  set("capacity_factor", capacityFactor);
  set("moe_every", moeEvery);
  set("aux_loss_coef", auxLossCoef);
}

Result<layout::ModelConfig> MoeFlags::appliedTo(const layout::ModelConfig& model) const {
  if (!any()) return model;
  nlohmann::json j = layout::toJson(model);
  applyTo(j);
  return layout::modelConfigFromJson(j);
}

void addLayoutFlags(Command cmd, LayoutFlags& flags) {
  cmd.option("--layout", flags.layoutFile, "Layout file (flags below override its keys)");
  cmd.option("--dp", flags.dp, "Data-parallel degree");
  cmd.option("--tp", flags.tp, "Tensor-parallel degree");
  cmd.option("--pp", flags.pp, "Pipeline stages");
  cmd.option("--ep", flags.ep, "Expert parallelism: experts split over ep ranks of dp");
  cmd.option("--zero", flags.zero, "ZeRO stage 0-3 over the dp group");
  cmd.option("--model", flags.model, "Model preset: tiny, small, gpt2-124m");
  cmd.option("--steps", flags.steps, "Optimizer steps");
  cmd.option("--micro-batches,--microbatches", flags.microBatches,
             "Micro-batches per step and rank");
  cmd.option("--micro-batch-size", flags.microBatchSize, "Sequences per micro-batch");
  cmd.option("--global-batch", flags.globalBatch,
             "Sequences per step over all dp ranks (checked against the others)");
  cmd.option("--seed", flags.seed, "Seed of initialisation and data order");
  cmd.option("--lr", flags.lr, "Peak learning rate");
  cmd.option("--schedule", flags.schedule, "Pipeline schedule: gpipe, 1f1b, interleaved, zb-h1");
  cmd.option("--chunks", flags.chunks, "Model chunks per stage (v, interleaved only)");
  cmd.flag("--recompute", flags.recompute,
           "Activation checkpointing: keep stage inputs, recompute before backward");
  cmd.option("--bucket-mb", flags.bucketMb, "Gradient bucket size in MiB");
  cmd.option("--bucket-elements", flags.bucketElements, "Gradient bucket size in elements");
  cmd.flag("--no-overlap", flags.noOverlap, "Reduce gradients after backward instead of during it");
  cmd.option("--grad-compression", flags.gradCompression,
             "Compress dp gradient buckets: none, fp16, bf16, int8, topk:RATIO, powersgd:RANK "
             "(zero 0 only)");
  cmd.option("--allreduce", flags.allReduce,
             "dp gradient all-reduce: flat, or hierarchical (inside each node, then across "
             "nodes; zero 0, no compression)");
  cmd.option("--ranks-per-node", flags.ranksPerNode,
             "Emulate nodes of K consecutive ranks on this machine (0: the nodes are the "
             "hosts)");
  cmd.option("--inter-node-gbps", flags.interNodeGbps,
             "Emulated link between the --ranks-per-node nodes: Gb/s per rank (0: not paced)");
  cmd.option("--inter-node-latency-us", flags.interNodeLatencyUs,
             "Emulated link between the --ranks-per-node nodes: latency per message in us");
  cmd.option("--hosts", flags.hosts, "host or host:slots, comma-separated (to mpirun)")
      .delimiter(',');
  cmd.option("--hostfile", flags.hostfile, "An mpirun hostfile");
  cmd.option("--data", flags.data, "Text file to train on (default: built-in corpus)");
  cmd.option("--backend", flags.backend, kBackendHelp);
  cmd.option("--precision", flags.precision, kPrecisionHelp);
  addMoeFlags(cmd, flags.moe);
}

Result<nlohmann::json> layoutJson(const LayoutFlags& a) {
  nlohmann::json j = nlohmann::json::object();
  if (!a.layoutFile.empty()) {
    std::ifstream in(a.layoutFile);
    if (!in) return Status::notFound("layout file '" + a.layoutFile + "' cannot be read");
    std::stringstream text;
    text << in.rdbuf();
    Result<nlohmann::json> parsed = layout::parseStrictJson(text.str(), "layout");
    if (!parsed.isOk() || !parsed->is_object()) {
      return layout::layoutFromFile(a.layoutFile).status();  // its message names the problem
    }
    j = std::move(*parsed);
  }
  auto set = [&j](const char* key, const auto& value) {
    if (value) j[key] = *value;
  };
  set("dp", a.dp);
  set("tp", a.tp);
  set("pp", a.pp);
  set("ep", a.ep);
  set("zero_stage", a.zero);
  set("virtual_chunks", a.chunks);
  set("micro_batches", a.microBatches);
  set("micro_batch_size", a.microBatchSize);
  set("global_batch", a.globalBatch);
  set("steps", a.steps);
  set("seed", a.seed);
  set("learning_rate", a.lr);
  set("bucket_mb", a.bucketMb);
  set("bucket_elements", a.bucketElements);
  set("model", a.model);
  set("schedule", a.schedule);
  set("hostfile", a.hostfile);
  set("data_file", a.data);
  set("backend", a.backend);
  set("precision", a.precision);
  set("grad_compression", a.gradCompression);
  set("all_reduce", a.allReduce);
  set("ranks_per_node", a.ranksPerNode);
  set("inter_node_gbps", a.interNodeGbps);
  set("inter_node_latency_us", a.interNodeLatencyUs);
  if (a.moe.any()) {  // the model as an object: its preset (or the file's model) plus the keys
    nlohmann::json model = j.contains("model") ? j["model"] : nlohmann::json("tiny");
    if (model.is_string()) model = {{"preset", model}};
    if (model.is_object()) a.moe.applyTo(model);
    j["model"] = model;
  }
  if (!a.hosts.empty()) j["hosts"] = a.hosts;
  if (a.noOverlap) j["overlap"] = false;
  if (a.recompute) j["recompute"] = true;
  return j;
}

}  // namespace bubblescope::cli
