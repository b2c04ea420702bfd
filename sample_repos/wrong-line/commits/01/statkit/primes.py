"""Prime numbers for the checksum code."""


def is_prime(n):
    """True if n is a prime number."""
    if n < 2:
        return False
    i = 2
    while i * i <= n:
        if n % i == 0:
            return False
        i += 1
    return True


def gcd(a, b):
    """Greatest common divisor (Euclid)."""
    while b:
        a, b = b, a % b
    return abs(a)


def lcm(a, b):
    """Least common multiple of two non-zero integers."""
    return abs(a * b) // gcd(a, b)


def primes_below(limit):
    """All primes p < limit, in increasing order."""
    return [n for n in range(2, limit) if is_prime(n)]


def factorize(n):
    """Prime factors of n >= 2 in increasing order, with repetition."""
    if n < 2:
        raise ValueError("factorize needs n >= 2")
    factors = []
    p = 2
    while p * p <= n:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    if n > 1:
        factors.append(n)
    return factors


def is_coprime(a, b):
    """True if a and b share no prime factor."""
    return gcd(a, b) == 1


def totient(n):
    """Euler's phi: how many 1 <= k <= n are coprime to n."""
    result = n
    for p in set(factorize(n)) if n > 1 else ():
        result -= result // p
    return result


def next_prime(n):
    """Smallest prime strictly greater than n."""
    candidate = n + 1
    while not is_prime(candidate):
        candidate += 1
    return candidate
