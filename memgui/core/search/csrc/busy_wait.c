/*
** memgui_busy_wait: a busy handler that looks for the lock every millisecond.
**
**   SELECT memgui_busy_wait(<ms>)    -- this connection waits up to <ms> for a lock
**   SELECT memgui_busy_polls()       -- looks for a lock so far, by every connection
**
** SQLite's own busy timeout sleeps 1, 2, 5, 10, 15, 20, 25 ms ... between its looks, so a
** lock another connection holds 3 ms is taken after ~8 ms and one held 9 ms after ~18.
** This handler sleeps a millisecond between looks and takes the lock within about that
** of its release. It runs inside sqlite3_step, where the program (apsw) has let go of
** Python's lock: the looks cost the program's other threads nothing. A call of
** memgui_busy_wait replaces the connection's busy timeout or handler, as
** sqlite3_busy_timeout would; a later sqlite3_busy_timeout replaces it in turn.
*/
#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include <string.h>

#ifdef _WIN32
#include <windows.h>
#else
#include <time.h>
#endif

#define POLL_US 1000 /* between two looks for the lock */
#define WAIT_MAX_MS 2147483647 /* INT_MAX (~24 days): a longer wait is capped there */

typedef struct BusyWait BusyWait; /* one per connection: the functions' user data */
struct BusyWait {
  int msTimeout;
  sqlite3_int64 iStartUs; /* when the present wait began (its first call) */
};

/* Every connection's looks, for a test or a bench to see the handler at work. */
static volatile sqlite3_int64 nPolls = 0;

static sqlite3_int64 monotonicUs(void) {
#ifdef _WIN32
  return (sqlite3_int64)GetTickCount64() * 1000;
#else
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (sqlite3_int64)t.tv_sec * 1000000 + t.tv_nsec / 1000;
#endif
}

static void sleepUs(sqlite3_int64 us) {
#ifdef _WIN32
  Sleep((DWORD)((us + 999) / 1000));
#else
  struct timespec t;
  t.tv_sec = (time_t)(us / 1000000);
  t.tv_nsec = (long)(us % 1000000) * 1000;
  nanosleep(&t, 0);
#endif
}

/* SQLite's busy handler: nonzero to look again, zero to give up (SQLITE_BUSY). */
static int pollForLock(void *pArg, int nCount) {
  BusyWait *p = (BusyWait *)pArg;
  sqlite3_int64 now = monotonicUs();
  sqlite3_int64 left;
  if (nCount == 0) p->iStartUs = now;
  left = p->iStartUs + (sqlite3_int64)p->msTimeout * 1000 - now;
  if (left <= 0) return 0;
  sleepUs(left < POLL_US ? left : POLL_US);
  nPolls++;
  return 1;
}

static void busyWaitFunc(sqlite3_context *pCtx, int nArg, sqlite3_value **apArg) {
  BusyWait *p = (BusyWait *)sqlite3_user_data(pCtx);
  sqlite3_int64 ms;
  (void)nArg;
  if (sqlite3_value_numeric_type(apArg[0]) != SQLITE_INTEGER) {
    sqlite3_result_error(pCtx, "memgui_busy_wait: the wait must be an integer of ms", -1);
    return;
  }
  ms = sqlite3_value_int64(apArg[0]);
  if (ms < 0) ms = 0;
  if (ms > WAIT_MAX_MS) ms = WAIT_MAX_MS;
  p->msTimeout = (int)ms;
  /* A wait of 0 gives up at once: no handler, as sqlite3_busy_timeout(db, 0) leaves it. */
  sqlite3_busy_handler(sqlite3_context_db_handle(pCtx), ms > 0 ? pollForLock : 0, p);
  sqlite3_result_int64(pCtx, ms);
}

static void busyPollsFunc(sqlite3_context *pCtx, int nArg, sqlite3_value **apArg) {
  (void)nArg;
  (void)apArg;
  sqlite3_result_int64(pCtx, nPolls);
}

int memguiBusyWaitInit(sqlite3 *db) {
  BusyWait *p = (BusyWait *)sqlite3_malloc64(sizeof(BusyWait));
  int rc;
  if (p == 0) return SQLITE_NOMEM;
  memset(p, 0, sizeof(BusyWait));
  /* The handler's data lives as long as the function, that is as the connection. Called
  ** from the program only: a trigger or a view in a brain file may not change the waits. */
  rc = sqlite3_create_function_v2(db, "memgui_busy_wait", 1, SQLITE_UTF8 | SQLITE_DIRECTONLY,
                                  (void *)p, busyWaitFunc, 0, 0, sqlite3_free);
  if (rc != SQLITE_OK) return rc;
  return sqlite3_create_function_v2(db, "memgui_busy_polls", 0, SQLITE_UTF8, 0,
                                    busyPollsFunc, 0, 0, 0);
}
