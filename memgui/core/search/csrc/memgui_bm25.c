/*
** memgui_bm25: FTS5's bm25 ranking, to the last bit, for memgui's keyword search.
**
**   memgui_bm25(<fts table>, '<table name>', <MATCH text>, <limit> [, weight, ...])
**
** The score is FTS5's bm25 (ext/fts5/fts5_aux.c): the same constants, the same arithmetic
** in the same order, so the two give identical doubles. Two things make it quicker:
**
** - Each phrase's document count (FTS5 reads every phrase's whole doclist once per
**   statement for it) is kept per connection, keyed by the table name and the MATCH text,
**   while nothing changed: no commit by any connection (each schema's data version) and no
**   change by this one (its total changes). Inside this connection's write transaction
**   nothing is kept or used (a rollback would undo a counted change). A MATCH text of plain
**   words (an agent's search: barewords and single spaces, one phrase each) keeps each
**   word's count on its own, so that another query with the same word counts it no more.
** - With <limit> > 0 (the statement's own LIMIT, on a statement with no filter but the
**   MATCH), a row whose best possible score (its length taken as small as its matches
**   allow) is worse than the <limit>-th best score so far cannot be in the result: its
**   length (a row read from the %_docsize table) is not read, and that bound is returned
**   (it sorts after every row the LIMIT keeps).
**
** Loaded with sqlite3_load_extension, so it runs inside the SQLite the program uses. The
** same load registers memgui_busy_wait (busy_wait.c).
** memgui is MIT-licensed; sqlite3.h and sqlite3ext.h beside this file are SQLite's
** (public domain).
*/
#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT1

#include <math.h>
#include <string.h>

#include "count_cache.h"

int memguiBusyWaitInit(sqlite3 *db); /* busy_wait.c, registered by the same load */

#define LIMIT_MAX 1000000 /* a larger limit scores every row (the heap would be too big) */

typedef struct Query Query; /* one per statement: FTS5's auxiliary data */
struct Query {
  int nPhrase;
  double avgdl;
  double *aIDF;
  double *aFreq;
  int nLimit;          /* the k best kept (0: every row's score is computed) */
  int nHeap;           /* scores in aHeap: a max-heap of the best nLimit exact scores */
  double *aHeap;
  int bPrune;          /* nLimit > 0 and no column weights */
  int nCol;
  int *aPhraseTok;     /* tokens in each phrase */
  int *aEnd;           /* per column, the end of the last match in the current row */
  int bHaveRowid;
  sqlite3_int64 iLastRowid; /* the last row scored (a row scored twice counts once) */
};

static int countCb(const Fts5ExtensionApi *pApi, Fts5Context *pFts, void *pUserData) {
  (void)pApi;
  (void)pFts;
  (*(sqlite3_int64 *)pUserData)++;
  return SQLITE_OK;
}

/* The document counts of phrases iFirst .. iFirst + n - 1 into aHit, as FTS5's bm25 counts
** them (each phrase's whole doclist). */
static int countPhrases(const Fts5ExtensionApi *pApi, Fts5Context *pFts, Cache *pCache,
                        int iFirst, int n, sqlite3_int64 *aHit) {
  int i, rc = SQLITE_OK;
  for (i = 0; rc == SQLITE_OK && i < n; i++) {
    aHit[i] = 0;
    pCache->nCounted++;
    rc = pApi->xQueryPhrase(pFts, iFirst + i, (void *)&aHit[i], countCb);
  }
  return rc;
}

/* The counts of phrases iFirst .. iFirst + n - 1, kept under the key of table and text `z`
** (a plain word's, bWord) when the cache holds them, else counted and kept. */
static int keptOrCounted(const Fts5ExtensionApi *pApi, Fts5Context *pFts, Cache *pCache,
                         const unsigned char *zTable, int nTable, const char *z, int nz,
                         int bWord, int iFirst, int n, sqlite3_int64 *aHit) {
  int nKey = 0, rc;
  char *zKey = memguiCacheKey(zTable, nTable, z, nz, &nKey);
  unsigned int iHash;
  CacheEntry *e;
  if (zKey == 0) return SQLITE_NOMEM;
  iHash = memguiKeyHash(zKey, nKey);
  e = memguiCacheFind(pCache, zKey, nKey, iHash, bWord, n);
  if (e) {
    memcpy(aHit, e->aHit, sizeof(sqlite3_int64) * n);
    sqlite3_free(zKey);
    return SQLITE_OK;
  }
  rc = countPhrases(pApi, pFts, pCache, iFirst, n, aHit);
  if (rc == SQLITE_OK) memguiCacheAdd(pCache, zKey, nKey, iHash, bWord, n, aHit);
  else sqlite3_free(zKey);
  return rc;
}

/* Each phrase's document count: from the cache when it holds them, else counted as FTS5's
** bm25 counts them (and kept): a plain MATCH text's word by word, any other whole. */
static int phraseHits(const Fts5ExtensionApi *pApi, Fts5Context *pFts, Cache *pCache,
                      sqlite3_value *pTable, sqlite3_value *pMatch, int nPhrase,
                      sqlite3_int64 *aHit) {
  sqlite3_int64 nChange = 0;
  sqlite3_uint64 iVersion = 0;
  int i, rc = SQLITE_OK;
  int aStart[WORDS_MAX], aLen[WORDS_MAX];
  const unsigned char *zTable = sqlite3_value_text(pTable);
  const unsigned char *zMatch = sqlite3_value_text(pMatch);
  int nTable = sqlite3_value_bytes(pTable);
  int nMatch = sqlite3_value_bytes(pMatch);

  if (zTable == 0 || zMatch == 0 || !memguiCacheState(pCache, &nChange, &iVersion)) {
    return countPhrases(pApi, pFts, pCache, 0, nPhrase, aHit);
  }
  if (pCache->nChange != nChange || pCache->iVersion != iVersion) {
    memguiCacheClear(pCache);
    pCache->nChange = nChange;
    pCache->iVersion = iVersion;
  }
  if (!memguiPlainWords(zMatch, nMatch, nPhrase, aStart, aLen)) {
    return keptOrCounted(pApi, pFts, pCache, zTable, nTable, (const char *)zMatch, nMatch, 0,
                         0, nPhrase, aHit);
  }
  for (i = 0; rc == SQLITE_OK && i < nPhrase; i++) {
    rc = keptOrCounted(pApi, pFts, pCache, zTable, nTable, (const char *)&zMatch[aStart[i]],
                       aLen[i], 1, i, 1, &aHit[i]);
  }
  return rc;
}

static int queryData(const Fts5ExtensionApi *pApi, Fts5Context *pFts, int nVal,
                     sqlite3_value **apVal, Query **ppQuery) {
  Query *p = (Query *)pApi->xGetAuxdata(pFts, 0);
  int rc = SQLITE_OK;
  if (p == 0) {
    int nPhrase = pApi->xPhraseCount(pFts);
    int nLimit = sqlite3_value_int(apVal[2]);
    sqlite3_int64 nRow = 0, nToken = 0;
    sqlite3_int64 *aHit;
    sqlite3_int64 nByte;
    int i;
    if (nLimit < 0 || nLimit > LIMIT_MAX) nLimit = 0;
    int nCol = pApi->xColumnCount(pFts);
    nByte = sizeof(Query) + sizeof(double) * ((sqlite3_int64)nPhrase * 2 + nLimit)
          + sizeof(sqlite3_int64) * (sqlite3_int64)(nPhrase > 0 ? nPhrase : 1)
          + sizeof(int) * ((sqlite3_int64)nPhrase + nCol);
    p = (Query *)sqlite3_malloc64(nByte);
    if (p == 0) return SQLITE_NOMEM;
    memset(p, 0, (size_t)nByte);
    p->nPhrase = nPhrase;
    p->aIDF = (double *)&p[1];
    p->aFreq = &p->aIDF[nPhrase];
    p->aHeap = &p->aFreq[nPhrase];
    aHit = (sqlite3_int64 *)&p->aHeap[nLimit];
    p->aPhraseTok = (int *)&aHit[nPhrase > 0 ? nPhrase : 1];
    p->aEnd = &p->aPhraseTok[nPhrase];
    p->nCol = nCol;
    for (i = 0; i < nPhrase; i++) p->aPhraseTok[i] = pApi->xPhraseSize(pFts, i);
    p->nLimit = nLimit;
    p->bPrune = nLimit > 0 && nVal == 3;

    /* As FTS5's bm25: the average row length, then each phrase's IDF. */
    rc = pApi->xRowCount(pFts, &nRow);
    if (rc == SQLITE_OK) rc = pApi->xColumnTotalSize(pFts, -1, &nToken);
    if (rc == SQLITE_OK) p->avgdl = (double)nToken / (double)nRow;
    if (rc == SQLITE_OK) {
      Cache *pCache = (Cache *)pApi->xUserData(pFts);
      rc = phraseHits(pApi, pFts, pCache, apVal[0], apVal[1], nPhrase, aHit);
    }
    for (i = 0; rc == SQLITE_OK && i < nPhrase; i++) {
      double idf = log((nRow - aHit[i] + 0.5) / (aHit[i] + 0.5));
      if (idf <= 0.0) idf = 1e-6; /* FTS5's floor: a phrase in over half the rows */
      p->aIDF[i] = idf;
    }
    if (rc == SQLITE_OK) rc = pApi->xSetAuxdata(pFts, p, sqlite3_free);
    else sqlite3_free(p);
    if (rc != SQLITE_OK) p = 0;
  }
  *ppQuery = p;
  return rc;
}

/* The score of a row of D tokens: FTS5's expression, term for term. */
static double score(const Query *p, double D) {
  const double k1 = 1.2;
  const double b = 0.75;
  double s = 0.0;
  int i;
  for (i = 0; i < p->nPhrase; i++) {
    s += p->aIDF[i] * ((p->aFreq[i] * (k1 + 1.0)) / (p->aFreq[i] + k1 * (1 - b + b * D / p->avgdl)));
  }
  return -1.0 * s;
}

/* Keep `s` among the best nLimit exact scores (a max-heap: aHeap[0] is the worst kept). */
static void heapAdd(Query *p, double s) {
  double *a = p->aHeap;
  int i;
  if (p->nHeap < p->nLimit) {
    i = p->nHeap++;
    while (i > 0 && a[(i - 1) / 2] < s) {
      a[i] = a[(i - 1) / 2];
      i = (i - 1) / 2;
    }
    a[i] = s;
    return;
  }
  if (!(s < a[0])) return;
  i = 0;
  for (;;) {
    int l = 2 * i + 1, r = l + 1, m = i;
    double v = s;
    if (l < p->nHeap && a[l] > v) { m = l; v = a[l]; }
    if (r < p->nHeap && a[r] > v) { m = r; }
    if (m == i) break;
    a[i] = a[m];
    i = m;
  }
  a[i] = s;
}

static void memguiBm25(const Fts5ExtensionApi *pApi, Fts5Context *pFts, sqlite3_context *pCtx,
                       int nVal, sqlite3_value **apVal) {
  Query *p = 0;
  int rc, i, nInst = 0;
  int nLeast = 0; /* the fewest tokens the row can hold, from where its matches end */
  int nTok = 0;
  double s;

  if (nVal < 3) {
    sqlite3_result_error(pCtx, "memgui_bm25: expects (table, table name, MATCH text, limit"
                               " [, column weights])", -1);
    return;
  }
  rc = queryData(pApi, pFts, nVal, apVal, &p);
  if (rc == SQLITE_OK) {
    memset(p->aFreq, 0, sizeof(double) * p->nPhrase);
    if (p->bPrune) memset(p->aEnd, 0, sizeof(int) * p->nCol);
    rc = pApi->xInstCount(pFts, &nInst);
  }
  for (i = 0; rc == SQLITE_OK && i < nInst; i++) {
    int ip, ic, io;
    rc = pApi->xInst(pFts, i, &ip, &ic, &io);
    if (rc == SQLITE_OK) {
      double w = (nVal - 3 > ic) ? sqlite3_value_double(apVal[3 + ic]) : 1.0;
      p->aFreq[ip] += w;
      if (p->bPrune && ic >= 0 && ic < p->nCol && io + p->aPhraseTok[ip] > p->aEnd[ic]) {
        p->aEnd[ic] = io + p->aPhraseTok[ip];
      }
    }
  }
  if (rc != SQLITE_OK) {
    sqlite3_result_error_code(pCtx, rc);
    return;
  }
  if (p->bPrune && p->nHeap == p->nLimit) {
    /* A column holds at least the tokens up to the end of its last match (a phrase lies
    ** within one column), and a longer row scores worse. */
    double best;
    for (i = 0; i < p->nCol; i++) nLeast += p->aEnd[i];
    best = score(p, (double)nLeast);
    if (best > p->aHeap[0]) {
      sqlite3_result_double(pCtx, best);
      return;
    }
  }
  rc = pApi->xColumnSize(pFts, -1, &nTok);
  if (rc != SQLITE_OK) {
    sqlite3_result_error_code(pCtx, rc);
    return;
  }
  s = score(p, (double)nTok);
  if (p->bPrune) {
    sqlite3_int64 iRowid = pApi->xRowid(pFts);
    if (!p->bHaveRowid || iRowid != p->iLastRowid) heapAdd(p, s);
    p->bHaveRowid = 1;
    p->iLastRowid = iRowid;
  }
  sqlite3_result_double(pCtx, s);
}

/* memgui_bm25_counted(): how many phrase doclists this connection has counted so far. */
static void countedFunc(sqlite3_context *pCtx, int nVal, sqlite3_value **apVal) {
  (void)nVal;
  (void)apVal;
  sqlite3_result_int64(pCtx, ((Cache *)sqlite3_user_data(pCtx))->nCounted);
}

static fts5_api *fts5Api(sqlite3 *db) {
  fts5_api *pRet = 0;
  sqlite3_stmt *pStmt = 0;
  if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &pStmt, 0) == SQLITE_OK) {
    sqlite3_bind_pointer(pStmt, 1, (void *)&pRet, "fts5_api_ptr", 0);
    sqlite3_step(pStmt);
  }
  sqlite3_finalize(pStmt);
  return pRet;
}

#ifdef _WIN32
__declspec(dllexport)
#endif
int sqlite3_memguibm_init(sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pApi) {
  fts5_api *pFts5;
  Cache *pCache;
  int rc;
  SQLITE_EXTENSION_INIT2(pApi);
  pFts5 = fts5Api(db);
  if (pFts5 == 0 || pFts5->iVersion < 2) {
    *pzErrMsg = sqlite3_mprintf("memgui_bm25: this SQLite has no FTS5 (version 2 or later)");
    return SQLITE_ERROR;
  }
  pCache = (Cache *)sqlite3_malloc64(sizeof(Cache));
  if (pCache == 0) return SQLITE_NOMEM;
  memset(pCache, 0, sizeof(Cache));
  pCache->db = db;
  pCache->aEntry = (CacheEntry *)sqlite3_malloc64(sizeof(CacheEntry) * CACHE_MAX);
  pCache->aSlot = (int *)sqlite3_malloc64(sizeof(int) * CACHE_SLOTS);
  if (pCache->aEntry == 0 || pCache->aSlot == 0) {
    sqlite3_free(pCache->aEntry);
    sqlite3_free(pCache->aSlot);
    sqlite3_free(pCache);
    return SQLITE_NOMEM;
  }
  memset(pCache->aSlot, 0, sizeof(int) * CACHE_SLOTS);
  rc = pFts5->xCreateFunction(pFts5, "memgui_bm25", (void *)pCache, memguiBm25, memguiCacheDestroy);
  if (rc != SQLITE_OK) return rc;
  /* The cache lives as long as the connection (FTS5 frees it at close): no destructor. */
  rc = sqlite3_create_function_v2(db, "memgui_bm25_counted", 0, SQLITE_UTF8, (void *)pCache,
                                  countedFunc, 0, 0, 0);
  if (rc != SQLITE_OK) return rc;
  return memguiBusyWaitInit(db);
}
