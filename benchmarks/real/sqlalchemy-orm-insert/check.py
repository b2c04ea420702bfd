"""SQLAlchemy 1.4.33 regression: Session.execute(insert(MappedClass)) fails.

1.4.33 made an Insert against ORM entities an ORM-enabled statement by
registering an "orm" compile-state plugin for insert (ORMInsert), but the
class has none of the hooks Session.execute() calls on such a plugin, so
executing insert(User) in a Session raises AttributeError
('orm_pre_session_exec').  1.4.34 added them (#7878); 1.4.33 was yanked.

Exit 0: the insert runs; 1: the missing hook; 125: cannot tell.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checking import UNTESTABLE, run  # noqa: E402

HOOKS = ("orm_pre_session_exec", "orm_setup_cursor_result")


def main(sa, orm):

    Base = orm.declarative_base()

    class User(Base):
        __tablename__ = "users"
        id = sa.Column(sa.Integer, primary_key=True)
        name = sa.Column(sa.String(20))

    engine = sa.create_engine("sqlite://")
    Base.metadata.create_all(engine)

    def names(session):
        return sorted(session.execute(sa.select(User.name)).scalars())

    with orm.Session(engine) as session:
        # Sanity: Core inserts and the unit of work must work as usual.
        session.execute(sa.insert(User.__table__).values(name="core"))
        session.add(User(name="added"))
        session.flush()
        if names(session) != ["added", "core"]:
            print("inserts broken in an unrelated way:", names(session))
            return UNTESTABLE
        try:
            session.execute(sa.insert(User).values(name="orm"))
        except AttributeError as exc:
            if any(hook in str(exc) for hook in HOOKS):
                print("regression:", exc)
                return 1
            print("unexpected AttributeError:", exc)
            return UNTESTABLE
        if names(session) == ["added", "core", "orm"]:
            print("ok: insert(User) runs in a Session")
            return 0
        print("unexpected rows:", names(session))
        return UNTESTABLE


if __name__ == "__main__":
    run(main, "sqlalchemy", "sqlalchemy.orm")
