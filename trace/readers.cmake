# The sources of the trace readers (relative to trace/): the registration list, the inputs, the
# readers with their rows, detection and the factory. One list for the library (CMakeLists.txt here)
# and the fuzz targets (tests/fuzz/CMakeLists.txt): a new format's file is added here only.
set(DRIVELAB_TRACE_READER_SOURCES
    src/formats.cpp src/input.cpp src/text_readers.cpp src/csv_readers.cpp src/binary_readers.cpp src/readers.cpp)
