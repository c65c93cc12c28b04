#include "engine/layout/op.h"

namespace bubblescope::layout {

bool isCompute(OpType type) {
  return type == OpType::kForward || type == OpType::kBackward || type == OpType::kBackwardInput ||
         type == OpType::kBackwardWeight;
}

bool isGradientCollective(OpType type) {
  return type == OpType::kAllReduceGrads || type == OpType::kReduceScatterGrads;
}

bool isPointToPoint(OpType type) {
  return type == OpType::kSendActivation || type == OpType::kRecvActivation ||
         type == OpType::kSendGrad || type == OpType::kRecvGrad;
}

bool producesInputGrad(OpType type) {
  return type == OpType::kBackward || type == OpType::kBackwardInput;
}

const char* opTypeName(OpType type) {
  switch (type) {
    case OpType::kForward:
      return "Forward";
    case OpType::kBackward:
      return "Backward";
    case OpType::kBackwardInput:
      return "BackwardInput";
    case OpType::kBackwardWeight:
      return "BackwardWeight";
    case OpType::kSendActivation:
      return "SendActivation";
    case OpType::kRecvActivation:
      return "RecvActivation";
    case OpType::kSendGrad:
      return "SendGrad";
    case OpType::kRecvGrad:
      return "RecvGrad";
    case OpType::kAllReduceGrads:
      return "AllReduceGrads";
    case OpType::kReduceScatterGrads:
      return "ReduceScatterGrads";
    case OpType::kOptimizerStep:
      return "OptimizerStep";
    case OpType::kAllGatherParams:
      return "AllGatherParams";
  }
  return "Unknown";
}

char opTypeLetter(OpType type) {
  switch (type) {
    case OpType::kForward:
      return 'F';
    case OpType::kBackward:
      return 'B';
    case OpType::kBackwardInput:
      return 'B';
    case OpType::kBackwardWeight:
      return 'W';
    case OpType::kSendActivation:
    case OpType::kSendGrad:
      return 's';
    case OpType::kRecvActivation:
    case OpType::kRecvGrad:
      return 'r';
    case OpType::kAllReduceGrads:
    case OpType::kReduceScatterGrads:
      return 'A';
    case OpType::kOptimizerStep:
      return 'O';
    case OpType::kAllGatherParams:
      return 'G';
  }
  return '?';
}

std::string toString(const Op& op) {
  std::string s = opTypeName(op.type);
  if (op.microBatch < 0) return s;
  s += "(mb " + std::to_string(op.microBatch) + ", chunk " + std::to_string(op.chunk);
  if (op.type == OpType::kSendActivation || op.type == OpType::kSendGrad) {
    s += " -> stage " + std::to_string(op.peer);
  } else if (op.type == OpType::kRecvActivation || op.type == OpType::kRecvGrad) {
    s += " <- stage " + std::to_string(op.peer);
  }
  return s + ")";
}

}  // namespace bubblescope::layout
