// io/storage_failure.hpp: the one wording of a failed I/O (issue 15).
#include <gtest/gtest.h>

#include <cerrno>

#include "drivelab/io/storage_failure.hpp"

namespace drivelab::io {
namespace {

TEST(StorageFailure, NamesTheOperationLengthOffsetFileErrnoAndTimeIntoThePhase) {
  const FailedIo w{
      .op = Op::write, .length_bytes = 131072, .offset_bytes = 41943040, .file = "/dev/loop0", .result = -ENOSPC};
  EXPECT_EQ(storage_failure(w, 0.02, "measured phase"),
            "storage failure: write of 131072 bytes at offset 41943040 to /dev/loop0: No space left on device "
            "(ENOSPC), 0.02 s into the measured phase");
  const FailedIo r{.op = Op::read, .length_bytes = 4096, .offset_bytes = 0, .file = "f", .result = -EIO};
  EXPECT_EQ(
      storage_failure(r, 1.5, "warm-up"),
      "storage failure: read of 4096 bytes at offset 0 from f: Input/output error (EIO), 1.50 s into the warm-up");
}

TEST(StorageFailure, AShortTransferSaysHowManyBytesWentThrough) {
  const FailedIo w{.op = Op::write, .length_bytes = 8192, .offset_bytes = 4096, .file = "f", .result = 512};
  EXPECT_EQ(storage_failure(w, 3, "fill"),
            "storage failure: write of 8192 bytes at offset 4096 to f: short transfer of 512 bytes, 3.00 s into the "
            "fill");
}

TEST(StorageFailure, AFailedFdatasyncNamesTheFileWhatWasWrittenAndTheErrno) {
  EXPECT_EQ(storage_sync_failure("/mnt/x/f", "the fill", EIO),
            "storage failure: fdatasync of /mnt/x/f after the fill: Input/output error (EIO)");
}

}  // namespace
}  // namespace drivelab::io
