// golden_dump runs a net once forward and once backward in BVLC Caffe (CPU,
// float) and writes every blob's data and diff and every parameter's data
// and diff into a fixture: a binary NetParameter described in README.md.
// gocaffe's tests (tools/golden) load the fixture, run the same net and
// compare.
//
//   golden_dump [flags] NET.prototxt OUT.binaryproto
//
// Flags (also read from lines "# golden: FLAGS" in the prototxt, before
// those of the command line):
//   --phase TRAIN|TEST       the net's phase (default TRAIN)
//   --seed N                 Caffe's random seed (its fillers) and the seed
//                            of our own generator (default 1701)
//   --weights FILE           copy trained layers from a caffemodel
//   --fill NAME=SPEC         fill input blob NAME by SPEC (default
//                            uniform:-1:1); SPEC is uniform:A:B (reals in
//                            [A,B)), int:A:B (integers in [A,B]) or
//                            constant:V
//   --fill_param L[J]=SPEC   fill parameter J of layer L by SPEC, after
//                            Caffe's fillers and --weights
//   --seeded                 fill every parameter with our seeded generator
//                            and leave the parameters' data out (large
//                            nets): gocaffe regenerates them, and the
//                            inputs, bit for bit from the seed and flags
//   --max_stored K           store blobs and parameters of more than K
//                            values as K samples at indices drawn by the
//                            seeded generator
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "caffe/caffe.hpp"
#include "caffe/util/io.hpp"
#include "caffe/util/upgrade_proto.hpp"

using caffe::Blob;
using caffe::BlobProto;
using caffe::LayerParameter;
using caffe::Net;
using caffe::NetParameter;
using std::string;
using std::vector;

namespace {

// SplitMix64: the generator both programs implement (see rand_test.go). Every
// stream is keyed by a name, so values do not depend on fill order.
struct SplitMix {
  uint64_t s;
  uint64_t Next() {
    s += 0x9E3779B97F4A7C15ULL;
    uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Unit returns a double in [0,1) with 53 random bits.
  double Unit() { return static_cast<double>(Next() >> 11) / 9007199254740992.0; }  // 2^53
};

uint64_t Fnv1a(const string& s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

SplitMix Stream(uint64_t seed, const string& name) {
  return SplitMix{seed ^ Fnv1a(name)};
}

[[noreturn]] void Die(const string& msg) {
  std::cerr << "golden_dump: " << msg << std::endl;
  std::exit(2);
}

struct FillSpec {
  string kind;  // uniform, int, constant
  double a = 0, b = 0;
};

FillSpec ParseSpec(const string& what, const string& spec) {
  std::stringstream ss(spec);
  string kind, a, b;
  std::getline(ss, kind, ':');
  std::getline(ss, a, ':');
  std::getline(ss, b, ':');
  FillSpec f;
  f.kind = kind;
  char* end = nullptr;
  f.a = std::strtod(a.c_str(), &end);
  if (a.empty() || *end) Die(what + ": bad number in " + spec);
  if (kind == "constant") return f;
  f.b = std::strtod(b.c_str(), &end);
  if (b.empty() || *end) Die(what + ": bad number in " + spec);
  if (kind != "uniform" && kind != "int") {
    Die(what + ": fill kind must be uniform, int or constant, not " + kind);
  }
  return f;
}

void Fill(const FillSpec& f, uint64_t seed, const string& name, float* v,
          int n) {
  SplitMix r = Stream(seed, "fill:" + name);
  for (int i = 0; i < n; ++i) {
    if (f.kind == "constant") {
      v[i] = static_cast<float>(f.a);
    } else if (f.kind == "int") {
      uint64_t span = static_cast<uint64_t>(f.b - f.a + 1);
      v[i] = static_cast<float>(f.a + static_cast<double>(r.Next() % span));
    } else {
      v[i] = static_cast<float>(f.a + (f.b - f.a) * r.Unit());
    }
  }
}

// SeededFill is the parameter filler both programs share: uniform in
// [-s, s) with s = sqrt(3 / fan_in) (fan_in = count / shape[0]) for blobs
// of two or more axes, the variance of Caffe's Xavier filler, and s = 0.1
// for vectors (biases). Every operation is exact or correctly rounded
// (built with -ffp-contract=off), so Go reproduces each bit.
void SeededFill(uint64_t seed, const string& name, Blob<float>* b) {
  double s = 0.1;
  if (b->num_axes() >= 2) {
    s = std::sqrt(3.0 / static_cast<double>(b->count() / b->shape(0)));
  }
  SplitMix r = Stream(seed, "param:" + name);
  float* v = b->mutable_cpu_data();
  for (int i = 0; i < b->count(); ++i) {
    double u = r.Unit() * 2 - 1;
    v[i] = static_cast<float>(u * s);
  }
}

// SampleIndices are the indices at which a large parameter's diff is
// stored: k draws in [0, count) from the stream "sample:NAME".
vector<int> SampleIndices(uint64_t seed, const string& name, int count,
                          int k) {
  SplitMix r = Stream(seed, "sample:" + name);
  vector<int> idx(k);
  for (int i = 0; i < k; ++i) idx[i] = static_cast<int>(r.Next() % count);
  return idx;
}

struct Options {
  string model, out, weights;
  caffe::Phase phase = caffe::TRAIN;
  uint64_t seed = 1701;
  bool seeded = false;
  int max_stored = 0;
  std::map<string, FillSpec> fills, param_fills;
  vector<string> args;  // every flag, for the record
};

void ParseFlags(const vector<string>& a, Options* o, bool positional) {
  vector<string> pos;
  for (size_t i = 0; i < a.size(); ++i) {
    string f = a[i];
    if (f.rfind("--", 0) != 0) {
      if (!positional) Die("'# golden:' lines take flags only, not " + f);
      pos.push_back(f);
      continue;
    }
    auto value = [&]() -> string {
      if (i + 1 >= a.size()) Die(f + " needs a value");
      o->args.push_back(a[i + 1]);
      return a[++i];
    };
    o->args.push_back(f);
    if (f == "--phase") {
      string p = value();
      if (p == "TRAIN") {
        o->phase = caffe::TRAIN;
      } else if (p == "TEST") {
        o->phase = caffe::TEST;
      } else {
        Die("--phase must be TRAIN or TEST");
      }
    } else if (f == "--seed") {
      o->seed = std::strtoull(value().c_str(), nullptr, 10);
    } else if (f == "--weights") {
      o->weights = value();
    } else if (f == "--fill" || f == "--fill_param") {
      string v = value();
      size_t eq = v.rfind('=');
      if (eq == string::npos) Die(f + " wants NAME=SPEC, not " + v);
      FillSpec s = ParseSpec(f, v.substr(eq + 1));
      (f == "--fill" ? o->fills : o->param_fills)[v.substr(0, eq)] = s;
    } else if (f == "--seeded") {
      o->seeded = true;
    } else if (f == "--max_stored") {
      o->max_stored = std::atoi(value().c_str());
    } else {
      Die("unknown flag " + f);
    }
  }
  if (positional) {
    if (pos.size() != 2) Die("usage: golden_dump [flags] NET.prototxt OUT");
    o->model = pos[0];
    o->out = pos[1];
  }
}

// HeaderFlags returns the words of the prototxt's "# golden:" lines.
vector<string> HeaderFlags(const string& path) {
  std::ifstream in(path);
  if (!in) Die("cannot read " + path);
  vector<string> words;
  string line;
  const string tag = "# golden:";
  while (std::getline(in, line)) {
    if (line.rfind(tag, 0) != 0) continue;
    std::stringstream ss(line.substr(tag.size()));
    string w;
    while (ss >> w) words.push_back(w);
  }
  return words;
}

string ParamName(const string& layer, int j) {
  return layer + "[" + std::to_string(j) + "]";
}

LayerParameter* AddGoldenLayer(NetParameter* p, const string& name,
                               const string& type) {
  LayerParameter* l = p->add_layer();
  l->set_name(name);
  l->set_type(type);
  return l;
}

void Scalar(LayerParameter* l, double v) {
  BlobProto* b = l->add_blobs();
  b->mutable_shape()->add_dim(1);
  b->add_double_data(v);
}

bool Sampled(const Options& o, int count) {
  return o.max_stored > 0 && count > o.max_stored;
}

// AddSamples stores data and diff at SampleIndices in b, of shape [K].
void AddSamples(const Options& o, const string& name,
                const google::protobuf::RepeatedField<float>& data,
                const google::protobuf::RepeatedField<float>& diff,
                BlobProto* b) {
  b->mutable_shape()->add_dim(o.max_stored);
  for (int k : SampleIndices(o.seed, name, data.size(), o.max_stored)) {
    b->add_data(data.Get(k));
    b->add_diff(diff.Get(k));
  }
}

// FillInputs fills the tops of the Input layers by --fill (default
// uniform in [-1, 1)).
void FillInputs(const Options& o, Net<float>* net) {
  std::map<string, bool> filled;
  for (size_t i = 0; i < net->layers().size(); ++i) {
    if (string(net->layers()[i]->type()) != "Input") continue;
    for (size_t j = 0; j < net->top_vecs()[i].size(); ++j) {
      const string& name = net->blob_names()[net->top_ids(i)[j]];
      Blob<float>* b = net->top_vecs()[i][j];
      FillSpec f;
      f.kind = "uniform";
      f.a = -1;
      f.b = 1;
      auto it = o.fills.find(name);
      if (it != o.fills.end()) f = it->second;
      Fill(f, o.seed, name, b->mutable_cpu_data(), b->count());
      filled[name] = true;
    }
  }
  for (auto& f : o.fills) {
    if (!filled[f.first]) Die("--fill " + f.first + ": no Input top of that name");
  }
}

// FillParams overwrites the parameters Caffe's fillers (or --weights) gave
// by --seeded or --fill_param.
void FillParams(const Options& o, Net<float>* net) {
  if (o.seeded && (!o.param_fills.empty() || !o.weights.empty())) {
    Die("--seeded excludes --fill_param and --weights");
  }
  std::map<string, bool> known;
  for (size_t i = 0; i < net->layers().size(); ++i) {
    auto& blobs = net->layers()[i]->blobs();
    for (size_t j = 0; j < blobs.size(); ++j) {
      string name = ParamName(net->layer_names()[i], j);
      known[name] = true;
      if (o.seeded) SeededFill(o.seed, name, blobs[j].get());
      auto it = o.param_fills.find(name);
      if (it != o.param_fills.end()) {
        Fill(it->second, o.seed, name, blobs[j]->mutable_cpu_data(),
             blobs[j]->count());
      }
    }
  }
  for (auto& f : o.param_fills) {
    if (!known[f.first]) Die("--fill_param " + f.first + ": no such parameter");
  }
}

// StoreParams turns the layers of Caffe's Net::ToProto(write_diff) after
// Backward into the fixture's: each parameter's data as it was before
// Forward (none when seeded), its diff (moved to golden.param_samples when
// sampled); parameters that Forward changed also go to golden.updated.
void StoreParams(const Options& o, const NetParameter& before,
                 NetParameter* fixture, LayerParameter* param_samples,
                 LayerParameter* updated) {
  for (int i = 0; i < fixture->layer_size(); ++i) {
    LayerParameter* l = fixture->mutable_layer(i);
    for (int j = 0; j < l->blobs_size(); ++j) {
      BlobProto* b = l->mutable_blobs(j);
      const BlobProto& b0 = before.layer(i).blobs(j);
      string name = ParamName(l->name(), j);
      bool changed = false;
      for (int k = 0; k < b->data_size(); ++k) {
        changed = changed || b->data(k) != b0.data(k);
      }
      if (changed) {  // BatchNorm's statistics in TRAIN
        updated->add_top(name);
        BlobProto* u = updated->add_blobs();
        *u = *b;
        u->clear_diff();
      }
      if (Sampled(o, b->data_size())) {
        param_samples->add_top(name);
        AddSamples(o, name, b0.data(), b->diff(), param_samples->add_blobs());
        b->clear_diff();
      }
      *b->mutable_data() = b0.data();
      if (o.seeded) b->clear_data();
    }
  }
}

// StoreBlobs puts every net blob's data and diff into golden.blobs, or
// samples of them into golden.blob_samples.
void StoreBlobs(const Options& o, const Net<float>& net, LayerParameter* blobs,
                LayerParameter* blob_samples) {
  for (size_t i = 0; i < net.blobs().size(); ++i) {
    const string& name = net.blob_names()[i];
    BlobProto b;
    net.blobs()[i]->ToProto(&b, true);
    if (Sampled(o, b.data_size())) {
      blob_samples->add_top(name);
      AddSamples(o, name, b.data(), b.diff(), blob_samples->add_blobs());
    } else {
      blobs->add_top(name);
      *blobs->add_blobs() = b;
    }
  }
}

int Run(const Options& o) {
  caffe::Caffe::set_mode(caffe::Caffe::CPU);
  caffe::Caffe::set_random_seed(static_cast<unsigned int>(o.seed));
  NetParameter param;
  caffe::ReadNetParamsFromTextFileOrDie(o.model, &param);
  param.mutable_state()->set_phase(o.phase);
  Net<float> net(param);
  if (!o.weights.empty()) net.CopyTrainedLayersFrom(o.weights);
  FillInputs(o, &net);
  FillParams(o, &net);

  NetParameter before;
  net.ToProto(&before, false);
  net.ClearParamDiffs();
  float loss = 0;
  net.Forward(&loss);
  net.Backward();

  NetParameter fixture;
  net.ToProto(&fixture, true);
  fixture.mutable_state()->set_phase(o.phase);
  NetParameter extra;  // the golden.* layers, appended at the end
  LayerParameter* blobs = AddGoldenLayer(&extra, "golden.blobs", "GoldenBlobs");
  LayerParameter* blob_samples =
      AddGoldenLayer(&extra, "golden.blob_samples", "GoldenSamples");
  LayerParameter* param_samples =
      AddGoldenLayer(&extra, "golden.param_samples", "GoldenSamples");
  LayerParameter* updated = AddGoldenLayer(&extra, "golden.updated", "GoldenBlobs");
  LayerParameter* meta = AddGoldenLayer(&extra, "golden.meta", "GoldenMeta");
  StoreParams(o, before, &fixture, param_samples, updated);
  StoreBlobs(o, net, blobs, blob_samples);
  Scalar(meta, static_cast<double>(o.seed));
  Scalar(meta, loss);
  string args;
  for (const string& a : o.args) args += (args.empty() ? "" : " ") + a;
  meta->mutable_python_param()->set_param_str(args);
  for (const LayerParameter& l : extra.layer()) *fixture.add_layer() = l;

  caffe::WriteProtoToBinaryFile(fixture, o.out);
  std::cout << o.out << ": " << net.layers().size() << " layers, "
            << net.blobs().size() << " blobs, loss " << loss << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  FLAGS_logtostderr = 1;
  FLAGS_minloglevel = 2;
  google::InitGoogleLogging(argv[0]);
  vector<string> cmd(argv + 1, argv + argc);
  Options o;
  ParseFlags(cmd, &o, true);  // finds the model
  Options merged;
  ParseFlags(HeaderFlags(o.model), &merged, false);
  ParseFlags(cmd, &merged, true);
  return Run(merged);
}
