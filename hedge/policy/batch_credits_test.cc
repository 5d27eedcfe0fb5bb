#include "hedge/policy/batch_credits.h"

#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace tailgate::hedge {
namespace {

std::shared_ptr<HedgeBudget> NewBudget(double fraction, double burst) {
  return std::make_shared<HedgeBudget>(HedgeBudgetConfig{fraction, burst});
}

int Drain(BatchCredits& batch, HedgeBudget& budget) {
  int taken = 0;
  while (batch.TryConsume(budget)) ++taken;
  return taken;
}

TEST(BatchCreditsTest, ReadsAdmittedTogetherKeepEverythingTheyEarn) {
  const std::shared_ptr<HedgeBudget> budget = NewBudget(0.25, 2);
  BatchCredits batch;
  for (int i = 0; i < 100; ++i) batch.OnAdmission(budget);
  EXPECT_DOUBLE_EQ(batch.credits(*budget), 25);
  EXPECT_EQ(Drain(batch, *budget), 25);
  // The balance was neither earned into nor spent.
  EXPECT_DOUBLE_EQ(budget->credits(), 2);
  EXPECT_EQ(budget->admitted(), 100u);
  EXPECT_EQ(budget->extra(), 25u);
}

TEST(BatchCreditsTest, TheBoundHoldsOverBatchAndSingleReads) {
  const std::shared_ptr<HedgeBudget> budget = NewBudget(0.1, 3);
  {
    BatchCredits batch;
    for (int i = 0; i < 55; ++i) batch.OnAdmission(budget);
    for (int i = 0; i < 45; ++i) budget->OnAdmission();
    Drain(batch, *budget);
    while (budget->TryConsume()) {
    }
  }
  while (budget->TryConsume()) {
  }
  // 5 of the batch's own, 3 of the burst; the single reads' 4.5 were
  // capped away, and the batch left 0.5, which comes back, under a credit.
  EXPECT_EQ(budget->extra(), 8u);
  EXPECT_LE(static_cast<double>(budget->extra()),
            3 + 0.1 * static_cast<double>(budget->admitted()));
}

TEST(BatchCreditsTest, WhatIsLeftComesBackToTheBalanceUpToTheBurst) {
  const std::shared_ptr<HedgeBudget> budget = NewBudget(0.5, 4);
  while (budget->TryConsume()) {
  }
  {
    BatchCredits batch;
    for (int i = 0; i < 6; ++i) batch.OnAdmission(budget);  // 3 credits
    ASSERT_TRUE(batch.TryConsume(*budget));
  }
  EXPECT_DOUBLE_EQ(budget->credits(), 2);
  {
    BatchCredits batch;
    for (int i = 0; i < 20; ++i) batch.OnAdmission(budget);  // 10 credits
  }
  EXPECT_DOUBLE_EQ(budget->credits(), 4);  // capped
}

TEST(BatchCreditsTest, CreditPaysOnlyForItsOwnBudgetsHedges) {
  const std::shared_ptr<HedgeBudget> earning = NewBudget(0.5, 0);
  const std::shared_ptr<HedgeBudget> other = NewBudget(0.5, 1);
  BatchCredits batch;
  batch.OnAdmission(earning);
  batch.OnAdmission(earning);
  EXPECT_DOUBLE_EQ(batch.credits(*other), 0);
  EXPECT_FALSE(batch.TryConsume(*other));
  EXPECT_EQ(other->extra(), 0u);
}

TEST(BatchCreditsTest, HedgingTurnedOffStaysOffForABatch) {
  BatchCredits batch;
  // A fraction of 0 earns nothing.
  const std::shared_ptr<HedgeBudget> no_fraction = NewBudget(0, 10);
  for (int i = 0; i < 10; ++i) batch.OnAdmission(no_fraction);
  EXPECT_FALSE(batch.TryConsume(*no_fraction));
  // A burst below one credit turns hedging off, whatever is earned.
  const std::shared_ptr<HedgeBudget> small_burst = NewBudget(1, 0.5);
  for (int i = 0; i < 10; ++i) batch.OnAdmission(small_burst);
  EXPECT_DOUBLE_EQ(batch.credits(*small_burst), 10);
  EXPECT_FALSE(batch.TryConsume(*small_burst));
  EXPECT_EQ(small_burst->extra(), 0u);
}

TEST(BatchCreditsTest, KeepsItsBudgetsAliveUntilItEnds) {
  std::shared_ptr<HedgeBudget> budget = NewBudget(1, 2);
  const std::weak_ptr<HedgeBudget> watch = budget;
  auto batch = std::make_unique<BatchCredits>();
  batch->OnAdmission(std::move(budget));  // a reload dropped its owner
  EXPECT_FALSE(watch.expired());
  batch.reset();  // the refund reaches a live budget
  EXPECT_TRUE(watch.expired());
}

TEST(BatchCreditsTest, ConcurrentReadsNeverSpendMoreThanTheyEarned) {
  const std::shared_ptr<HedgeBudget> budget = NewBudget(0.5, 1);
  BatchCredits batch;
  std::vector<std::thread> threads;
  std::vector<int> taken(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 1000; ++i) {
        batch.OnAdmission(budget);
        if (batch.TryConsume(*budget)) ++taken[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const int total = taken[0] + taken[1] + taken[2] + taken[3];
  EXPECT_LE(total, 2000);
  EXPECT_EQ(static_cast<double>(total) + batch.credits(*budget), 2000);
  EXPECT_EQ(budget->extra(), static_cast<uint64_t>(total));
}

}  // namespace
}  // namespace tailgate::hedge
