// Runs a libFuzzer target over a fixed corpus without libFuzzer, so that a
// fuzz target doubles as a regression test under any compiler:
//
//   fuzz_corpus_test FILE_OR_DIRECTORY...
//
// Every regular file named, or found (not recursively) in a directory named,
// is passed once to LLVMFuzzerTestOneInput, in sorted order. A broken
// invariant aborts inside the target; finding no input at all is a failure
// too, so a mistyped corpus path cannot pass silently.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

// The regular files named by `args`, directories expanded one level.
bool CollectInputs(int argc, char** argv, std::vector<fs::path>& inputs) {
  for (int i = 1; i < argc; ++i) {
    const fs::path arg(argv[i]);
    std::error_code error;
    if (fs::is_directory(arg, error)) {
      for (const fs::directory_entry& entry :
           fs::directory_iterator(arg, error)) {
        if (entry.is_regular_file(error)) inputs.push_back(entry.path());
      }
    } else if (fs::is_regular_file(arg, error)) {
      inputs.push_back(arg);
    }
    if (error) {
      std::fprintf(stderr, "%s: %s\n", argv[i], error.message().c_str());
      return false;
    }
  }
  std::sort(inputs.begin(), inputs.end());
  return true;
}

bool ReadFile(const fs::path& path, std::string& contents) {
  std::ifstream file(path, std::ios::binary);
  if (!file.is_open()) return false;
  contents.assign(std::istreambuf_iterator<char>(file),
                  std::istreambuf_iterator<char>());
  return !file.bad();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<fs::path> inputs;
  if (!CollectInputs(argc, argv, inputs)) return 1;
  if (inputs.empty()) {
    std::fprintf(stderr, "usage: %s FILE_OR_DIRECTORY... (no inputs found)\n",
                 argv[0]);
    return 1;
  }
  std::string contents;
  for (const fs::path& input : inputs) {
    if (!ReadFile(input, contents)) {
      std::fprintf(stderr, "%s: cannot read\n", input.c_str());
      return 1;
    }
    std::fprintf(stderr, "running %s (%zu bytes)\n", input.c_str(),
                 contents.size());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(contents.data()),
                           contents.size());
  }
  std::fprintf(stderr, "ran %zu inputs\n", inputs.size());
  return 0;
}
