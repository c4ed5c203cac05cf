// What of a managed server's log a failed test's reason quotes (server_log_quote): its ERROR,
// FATAL and PANIC lines, not start-up noise or a PL/pgSQL body (issue 29).
#include <gtest/gtest.h>

#include "drivelab/oltp/backend/server.hpp"

namespace drivelab::oltp {
namespace {

// ---- the server log in a reason ---------------------------------------------------------------

TEST(ServerLogQuote, QuotesTheErrorLinesNotStartUpNoiseOrAFunctionBody) {
  std::string log =
      "2026-12-06 19:00:00.001 UTC [100] LOG:  starting PostgreSQL 16.4 on x86_64-pc-linux-gnu\n"
      "2026-12-06 19:00:00.002 UTC [100] LOG:  listening on Unix socket \"/t/.s.PGSQL.5432\"\n"
      "2026-12-06 19:00:00.003 UTC [101] LOG:  database system was shut down at 2026-12-06 18:59:59 UTC\n"
      "2026-12-06 19:00:00.004 UTC [100] LOG:  database system is ready to accept connections\n"
      "2026-12-06 19:00:08.000 UTC [120] ERROR:  could not serialize access due to concurrent update\n"
      "2026-12-06 19:00:08.000 UTC [120] CONTEXT:  PL/pgSQL function payment_fail() line 3 at RAISE\n"
      "2026-12-06 19:00:08.000 UTC [120] STATEMENT:  CREATE OR REPLACE FUNCTION payment(\n"
      "\t  p_w_id integer,\n"
      "\t  p_d_id integer\n"
      "\t) RETURNS void AS $$\n"
      "\tBEGIN\n"
      "\t  UPDATE warehouse SET w_ytd = w_ytd + 1;\n"
      "\tEND $$ LANGUAGE plpgsql\n";
  for (int i = 0; i < 30; ++i)
    log += "2026-12-06 19:00:0" + std::to_string(i % 10) + ".000 UTC [1" + std::to_string(i) +
           "] ERROR:  could not serialize access due to concurrent update\n"
           "2026-12-06 19:00:09.000 UTC [121] DETAIL:  Reason code: Canceled on identification as a pivot.\n"
           "2026-12-06 19:00:09.000 UTC [121] STATEMENT:  SELECT payment($1, $2)\n";
  for (int i = 0; i < 20; ++i) log += "\t  line " + std::to_string(i) + " of a function body\n";
  log += "2026-12-06 19:00:20.000 UTC [103] LOG:  checkpoint starting: time\n";
  const ServerLogQuote q = server_log_quote(log);
  EXPECT_TRUE(q.error_lines);
  EXPECT_NE(q.text.find("ERROR:  could not serialize access due to concurrent update [31 times]"), std::string::npos)
      << q.text;
  EXPECT_NE(q.text.find("DETAIL:  Reason code: Canceled on identification as a pivot. [30 times]"), std::string::npos)
      << q.text;
  EXPECT_EQ(q.text.find("STATEMENT"), std::string::npos) << q.text;
  EXPECT_EQ(q.text.find("CONTEXT"), std::string::npos) << q.text;
  EXPECT_EQ(q.text.find("function body"), std::string::npos) << q.text;
  EXPECT_EQ(q.text.find("BEGIN"), std::string::npos) << q.text;
  EXPECT_EQ(q.text.find("listening on"), std::string::npos) << q.text;  // start-up noise
  EXPECT_EQ(q.text.find("ready to accept connections"), std::string::npos) << q.text;
  EXPECT_NE(q.text.find("checkpoint starting"), std::string::npos) << q.text;  // what it did last
}

TEST(ServerLogQuote, MariadbErrorsAndALogWithoutErrors) {
  const ServerLogQuote maria = server_log_quote(
      "2026-12-06 19:00:00 0 [Note] Starting MariaDB 10.11.6 source revision\n"
      "2026-12-06 19:00:00 0 [Note] InnoDB: Buffer pool(s) load completed\n"
      "2026-12-06 19:00:00 0 [Note] mariadbd: ready for connections.\n"
      "2026-12-06 19:00:05 0 [ERROR] InnoDB: Cannot allocate memory for the buffer pool\n"
      "2026-12-06 19:00:06 0 [Note] a\n2026-12-06 19:00:06 0 [Note] b\n2026-12-06 19:00:06 0 [Note] c\n"
      "2026-12-06 19:00:06 0 [Note] d\n2026-12-06 19:00:06 0 [Note] e\n");
  EXPECT_TRUE(maria.error_lines);
  EXPECT_EQ(maria.text,
            "2026-12-06 19:00:05 0 [ERROR] InnoDB: Cannot allocate memory for the buffer pool\n"
            "2026-12-06 19:00:06 0 [Note] a\n2026-12-06 19:00:06 0 [Note] b\n2026-12-06 19:00:06 0 [Note] c\n"
            "2026-12-06 19:00:06 0 [Note] d\n2026-12-06 19:00:06 0 [Note] e");
  const ServerLogQuote quiet = server_log_quote(
      "2026-12-06 19:00:00.001 UTC [100] LOG:  starting PostgreSQL 16.4\n"
      "2026-12-06 19:00:01.000 UTC [100] LOG:  received immediate shutdown request\n"
      "2026-12-06 19:00:01.010 UTC [100] LOG:  database system is shut down\n");
  EXPECT_FALSE(quiet.error_lines);
  EXPECT_NE(quiet.text.find("received immediate shutdown request"), std::string::npos) << quiet.text;
  // What ended the server stays when the reconnect refusals and the business rollbacks after it
  // are more than the last lines quoted.
  std::string killed =
      "2026-12-06 19:00:00.001 UTC [100] LOG:  database system is ready to accept connections\n"
      "2026-12-06 19:00:01.000 UTC [100] LOG:  received immediate shutdown request\n";
  for (int i = 0; i < 6; ++i)
    killed +=
        "2026-12-06 19:00:01.100 UTC [20" + std::to_string(i) + "] FATAL:  the database system is shutting down\n";
  killed += "2026-12-06 19:00:01.200 UTC [100] LOG:  database system is shut down\n";
  const ServerLogQuote k = server_log_quote(killed);
  EXPECT_TRUE(k.error_lines);
  EXPECT_EQ(k.text,
            "2026-12-06 19:00:01.000 UTC [100] LOG:  received immediate shutdown request\n"
            "2026-12-06 19:00:01.100 UTC [205] FATAL:  the database system is shutting down [6 times]\n"
            "2026-12-06 19:00:01.200 UTC [100] LOG:  database system is shut down");
  EXPECT_EQ(server_log_quote("").text, "");
}

}  // namespace
}  // namespace drivelab::oltp
