#include "storage/import/kineto_parser.h"

#include <gtest/gtest.h>

#include <sstream>

namespace bubblescope::import {
namespace {

TEST(MicrosTextToNs, KeepsFractionalNanosecondsExactly) {
  // 1712195495505543.140 µs: a double holds 1712195495505543.25.
  EXPECT_EQ(microsTextToNs("1712195495505543.140", 1712195495505543.140), 1712195495505543140);
  EXPECT_EQ(microsTextToNs("4458677009853.422", 0), 4458677009853422);
  EXPECT_EQ(microsTextToNs("2636.669", 0), 2636669);
  EXPECT_EQ(microsTextToNs("12", 12), 12000);
  EXPECT_EQ(microsTextToNs("0.0005", 0.0005), 1);  // the fourth decimal rounds
  EXPECT_EQ(microsTextToNs("-1.5", -1.5), -1500);
  EXPECT_EQ(microsTextToNs("3.5e2", 350.0), 350000);  // exponent: through the double
}

struct Collected {
  std::vector<KinetoRecord> records;
  std::vector<KinetoHeader> headers;
};

Result<KinetoHeader> parse(const std::string& text, Collected& out) {
  std::istringstream in(text);
  KinetoCallbacks cb;
  cb.onHeader = [&](const KinetoHeader& h) {
    out.headers.push_back(h);
    return Status::ok();
  };
  cb.onRecord = [&](const KinetoRecord& r) {
    out.records.push_back(r);
    return Status::ok();
  };
  return parseKineto(in, cb);
}

TEST(ParseKineto, ReadsHeaderBeforeEventsAndTheEventsFields) {
  Collected c;
  auto h = parse(R"({"schemaVersion":1,
    "deviceProperties":[{"id":0,"name":"NVIDIA A100"}],
    "distributedInfo":{"backend":"nccl","rank":3,"world_size":8,
       "pg_config":[{"pg_name":"0","pg_desc":"default_pg","pg_size":8,"ranks":[0,1]}]},
    "traceEvents":[
      {"ph":"X","cat":"kernel","name":"ncclKernel_AllGather_RING","pid":0,"tid":7,
       "ts":100.25,"dur":3.5,"args":{"device":0,"stream":7,"correlation":42,
       "Collective name":"allgather","In msg nelems":10,"Out msg nelems":80,"dtype":"BFloat16",
       "Process Group Name":"0","grid":[1,2,3]}},
      {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":9,"tid":9,"ts":99,"dur":1,
       "args":{"correlation":42,"stream":"0x0"}}],
    "baseTimeNanoseconds": 1700000000000000000})",
                 c);
  ASSERT_TRUE(h.isOk()) << h.status().message();
  ASSERT_EQ(c.headers.size(), 1u);
  EXPECT_EQ(c.headers[0].rank, 3);
  EXPECT_EQ(c.headers[0].worldSize, 8);
  EXPECT_FALSE(c.headers[0].baseTimeNs.has_value());  // it comes after the events
  EXPECT_EQ(h->baseTimeNs, 1700000000000000000);
  ASSERT_EQ(h->groups.size(), 1u);
  EXPECT_EQ(h->groups[0].desc, "default_pg");
  EXPECT_EQ(h->deviceNames, std::vector<std::string>{"NVIDIA A100"});
  ASSERT_EQ(c.records.size(), 2u);
  const KinetoRecord& k = c.records[0];
  EXPECT_EQ(k.cat, "kernel");
  EXPECT_EQ(*k.tsNs, 100250);
  EXPECT_EQ(*k.durNs, 3500);
  EXPECT_EQ(k.stream, 7);
  EXPECT_EQ(k.correlation, 42);
  EXPECT_EQ(k.collective, "allgather");
  EXPECT_EQ(k.outNelems, 80);
  EXPECT_EQ(k.dtype, "BFloat16");
  EXPECT_EQ(k.groupName, "0");
  EXPECT_EQ(c.records[1].stream, 0);  // "0x0"
  EXPECT_EQ(*c.records[1].tsNs, 99000);
}

TEST(ParseKineto, MalformedJsonNamesTheByteOffset) {
  Collected c;
  auto h = parse(R"({"traceEvents":[{"ph":"X",}]})", c);
  ASSERT_FALSE(h.isOk());
  EXPECT_NE(h.status().message().find("malformed JSON at byte 27"), std::string::npos)
      << h.status().message();
}

TEST(ParseKineto, JsonThatIsNotATraceIsRefused) {
  Collected c;
  auto h = parse(R"({"layers": 12, "heads": 4})", c);
  ASSERT_FALSE(h.isOk());
  EXPECT_EQ(h.status().message(), "not a Kineto trace: it has no \"traceEvents\" array");
  EXPECT_FALSE(parse("42", c).isOk());
}

TEST(ParseKineto, ABareArrayOfEventsIsAccepted) {
  Collected c;
  auto h = parse(R"([{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":2}])", c);
  ASSERT_TRUE(h.isOk()) << h.status().message();
  ASSERT_EQ(c.records.size(), 1u);
  EXPECT_EQ(c.records[0].name, "a");
}

// A top-level array is an old Chrome trace only if it holds events.
TEST(ParseKineto, ABareArrayWithoutEventsIsNotATrace) {
  Collected c;
  auto numbers = parse("[1, 2, 3]", c);
  ASSERT_FALSE(numbers.isOk());
  EXPECT_EQ(numbers.status().message(),
            "not a Kineto trace: a top-level JSON array of 3 values, none of them a trace event "
            "(an object with \"ph\"); entry 0 is a number");
  auto objects = parse(R"([{"layers": 2}, {"heads": 4}])", c);
  ASSERT_FALSE(objects.isOk());
  EXPECT_NE(objects.status().message().find("entry 0 is an object without \"ph\""),
            std::string::npos)
      << objects.status().message();
  EXPECT_FALSE(parse("[]", c).isOk());
  EXPECT_TRUE(c.headers.empty());  // nothing reached the importer
  EXPECT_TRUE(c.records.empty());
}

// Entries of traceEvents that are not events are skipped and counted, the
// first one named; the events around them arrive.
TEST(ParseKineto, EntriesThatAreNotEventsAreCountedAndNamed) {
  Collected c;
  auto h = parse(R"({"traceEvents":[
      {"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":2},
      42, "text", [1], null, {"name":"no phase"},
      {"ph":"X","cat":"cpu_op","name":"b","pid":1,"tid":1,"ts":3,"dur":2}]})",
                 c);
  ASSERT_TRUE(h.isOk()) << h.status().message();
  ASSERT_EQ(c.records.size(), 2u);
  EXPECT_EQ(c.records[1].name, "b");
  EXPECT_EQ(h->skippedEntries, 5);
  EXPECT_EQ(h->firstSkipped, "traceEvents[1] is a number");
}

TEST(ParseKineto, ReadsInputDimsTypesAndGroupRanks) {
  Collected c;
  auto h = parse(R"({"distributedInfo":{"pg_config":[{"pg_name":"0","ranks":[0,1,2]}]},
    "traceEvents":[
      {"ph":"X","cat":"cpu_op","name":"c10d::alltoall_base_","pid":1,"tid":1,"ts":1,"dur":1,
       "args":{"Input Dims":[[382132224],[2,3,4],[],[[1],[2]]],
               "Input type":["unsigned char","float","","TensorList"],
               "Process Group Ranks":"[0, 1]"}}]})",
                 c);
  ASSERT_TRUE(h.isOk()) << h.status().message();
  ASSERT_EQ(c.records.size(), 1u);
  const KinetoRecord& r = c.records[0];
  EXPECT_EQ(r.inputElems, (std::vector<int64_t>{382132224, 24, -1, -1}));
  EXPECT_EQ(r.inputTypes, (std::vector<std::string>{"unsigned char", "float", "", "TensorList"}));
  EXPECT_EQ(r.groupRanks, "[0, 1]");
  ASSERT_EQ(h->groups.size(), 1u);
  EXPECT_EQ(h->groups[0].ranks, (std::vector<int64_t>{0, 1, 2}));
}

}  // namespace
}  // namespace bubblescope::import
