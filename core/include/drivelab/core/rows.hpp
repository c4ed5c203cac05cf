#pragma once
/// \file rows.hpp
/// The registration list of a plug-in kind that declares itself in one row per plug-in, each row
/// defined in the plug-in's own file (the I/O engines, io/src/engine.cpp; the trace formats,
/// trace/src/formats.cpp). The list is an X-macro of the rows' names:
///
///     #define DRIVELAB_IO_ENGINES(ROW) ROW(uring) ROW(libaio) ROW(psync) ROW(null)
///     DRIVELAB_ROW_TABLE(EngineInfo, DRIVELAB_IO_ENGINES, kEngines)
///
/// declares every row as `extern const EngineInfo NAME;` in namespace detail::rows (where each
/// plug-in's file defines it) and makes `kEngines`, the rows' addresses in the list's order, in an
/// unnamed namespace. Listing and referencing every row keeps registration explicit: nothing
/// depends on static initialisation or on the linker keeping an unreferenced object, and a row
/// left out of the list is dead code its kind's rows test finds.

/// One row's declaration (its type is the detail::rows::RowType that DRIVELAB_ROW_TABLE names).
#define DRIVELAB_ROW_DECLARE_(name) extern const RowType name;
/// One row's address in the table.
#define DRIVELAB_ROW_ADDRESS_(name) &detail::rows::name,

/// Declares the rows of LIST (of type Type) in detail::rows and defines `constexpr const Type*
/// table[]`, their addresses in LIST's order, in an unnamed namespace.
// NOLINTBEGIN(bugprone-macro-parentheses): `table` is a name, which parentheses cannot enclose
#define DRIVELAB_ROW_TABLE(Type, LIST, table)                    \
  namespace detail::rows {                                       \
  using RowType = Type;                                          \
  LIST(DRIVELAB_ROW_DECLARE_)                                    \
  }                                                              \
  namespace {                                                    \
  constexpr const Type* table[] = {LIST(DRIVELAB_ROW_ADDRESS_)}; \
  }
// NOLINTEND(bugprone-macro-parentheses)
