//===- ReplayMain.cpp - run a harness over its corpus (no libFuzzer) ------===//
//
// The normal build links each harness with this main instead of libFuzzer's,
// so CI replays the committed corpus on every change: each argument is a
// file or a folder of files, each file one input. Exit 0 means no input
// crashed (a crash kills the process, naming nothing: the last "replaying"
// line on stderr names the input).
//
//===----------------------------------------------------------------------===//
#include <cstdint>
#include <cstdio>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <vector>
#include <algorithm>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void collect(const std::string &path, std::vector<std::string> &files) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    std::fprintf(stderr, "error: %s: no such file or folder\n", path.c_str());
    std::exit(1);
  }
  if (!S_ISDIR(st.st_mode)) {
    files.push_back(path);
    return;
  }
  DIR *d = ::opendir(path.c_str());
  std::vector<std::string> names;
  while (dirent *e = ::readdir(d))
    if (e->d_name[0] != '.')
      names.push_back(e->d_name);
  ::closedir(d);
  std::sort(names.begin(), names.end());
  for (const std::string &n : names)
    collect(path + "/" + n, files);
}

int main(int argc, char **argv) {
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i)
    collect(argv[i], files);
  if (files.empty()) {
    std::fprintf(stderr, "error: no inputs to replay\n");
    return 1;
  }
  for (const std::string &f : files) {
    std::fprintf(stderr, "replaying %s\n", f.c_str());
    std::ifstream in(f, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    std::string s = bytes.str();
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(s.data()), s.size());
  }
  std::fprintf(stderr, "replayed %zu inputs\n", files.size());
  return 0;
}
