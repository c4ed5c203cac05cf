#pragma once
/// \file handle.hpp
/// An object of a C library owned by a std::unique_ptr whose deleter is the library's own free
/// function, written once instead of one deleter struct per type:
///
///     using ConnHandle = CHandle<PGconn, PQfinish>;   // libpq
///     using StmtHandle = CHandle<sqlite3_stmt, sqlite3_finalize>;
///
/// The free function's result (sqlite3_finalize's error code, ...) is ignored: it repeats an error
/// the last call already returned, and a destructor has no one to tell.
#include <memory>

namespace drivelab {

/// Calls `Free` on a non-null pointer (unique_ptr never calls its deleter with nullptr).
template <auto Free>
struct CallFree {
  template <class T>
  void operator()(T* p) const noexcept {
    static_cast<void>(Free(p));
  }
};

/// A unique_ptr<T> that releases with `Free(T*)`.
template <class T, auto Free>
using CHandle = std::unique_ptr<T, CallFree<Free>>;

}  // namespace drivelab
